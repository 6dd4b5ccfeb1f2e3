"""Where CKS Desktop keeps its data, settings and logs.

One override wins over everything: ``--data-dir DIR`` on the command line or
the ``CKS_DESKTOP_HOME`` environment variable. With it, data, config and logs
all live under that one folder, which is what tests and scripts want. Without
it the platform's usual folders are used (platformdirs).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from cks_desktop import APP_ID

ENV_HOME = "CKS_DESKTOP_HOME"


@dataclass(frozen=True)
class AppPaths:
    data_dir: Path
    config_dir: Path
    log_dir: Path

    @property
    def database(self) -> Path:
        return self.data_dir / "cks.sqlite3"

    @property
    def settings_file(self) -> Path:
        return self.config_dir / "settings.json"

    @property
    def mcp_log_dir(self) -> Path:
        return self.log_dir / "mcp"

    @property
    def app_log(self) -> Path:
        return self.log_dir / "cks-desktop.log"

    def ensure(self) -> "AppPaths":
        for d in (self.data_dir, self.config_dir, self.log_dir):
            d.mkdir(parents=True, exist_ok=True)
        return self


def resolve(data_dir: str | os.PathLike[str] | None = None) -> AppPaths:
    """Paths for this run: explicit ``data_dir`` > ``$CKS_DESKTOP_HOME`` > platform folders."""
    home = data_dir or os.environ.get(ENV_HOME)
    if home:
        root = Path(home).expanduser().resolve()
        return AppPaths(data_dir=root, config_dir=root, log_dir=root / "logs")
    return AppPaths(
        data_dir=Path(platformdirs.user_data_dir(APP_ID, appauthor=False)),
        config_dir=Path(platformdirs.user_config_dir(APP_ID, appauthor=False)),
        log_dir=Path(platformdirs.user_log_dir(APP_ID, appauthor=False)),
    )
