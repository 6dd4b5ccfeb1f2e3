"""Entry point of the frozen app (PyInstaller's script): the same ``cli.main`` as the installed command.

In the bundle ``sys.executable`` is this program, not a Python, so everything the package can do must
be reachable through its arguments: the GUI (no arguments), every CLI subcommand, and ``mcp serve``
(``cks-desktop mcp serve``; an MCP host or the app itself starts it as a subprocess of this binary).

One extra argument exists only here, ``--bundle-info``: it prints, as JSON, what the bundle actually
contains at run time: the version from the bundled package metadata, the keyring backends found
through entry points, the Qt platform plugins, and whether every module of the app and every lazily
imported SDK imports. The packaging test and anyone debugging an installed bundle need a way to
look inside the frozen interpreter, and there is no other one.
"""

from __future__ import annotations

import importlib
import json
import multiprocessing
import pkgutil
import sys

# Imported lazily by the app (so PyInstaller's analysis may not see them) or only at run time.
LAZY_IMPORTS = (
    "anthropic", "openai", "ollama", "google.genai", "mcp", "mcp.client.stdio", "mcp.client.streamable_http",
    "mcp.server.stdio", "igraph", "jsonschema", "keyring.backends.SecretService", "PySide6.QtWidgets",
    "PySide6.QtSvg", "qasync",
)


def import_report() -> dict[str, str]:
    """"ok" or the error, for each lazily imported library and every module of the app."""
    import cks_desktop

    names = list(LAZY_IMPORTS)
    names += sorted(m.name for m in pkgutil.walk_packages(cks_desktop.__path__, "cks_desktop."))
    report: dict[str, str] = {}
    for name in names:
        try:
            importlib.import_module(name)
            report[name] = "ok"
        except Exception as exc:  # report, don't stop: the point is to see every gap at once
            report[name] = f"{type(exc).__name__}: {exc}"
    return report


def bundle_info() -> dict[str, object]:
    import importlib.metadata as md
    from pathlib import Path

    import keyring
    import keyring.backend

    import cks_desktop

    keyring.backend.get_all_keyring()  # loads the entry-point plugins, like keyring's own discovery
    registered = sorted(f"{c.__module__}.{c.__qualname__}" for c in keyring.backend.KeyringBackend._classes)
    viable = sorted(f"{c.__module__}.{c.__qualname__}" for c in keyring.backend.KeyringBackend.get_viable_backends())
    chosen = keyring.get_keyring()
    bundle_dir = Path(getattr(sys, "_MEIPASS", Path(__file__).parent))
    plugins = sorted(p.name for p in bundle_dir.glob("PySide6/Qt/plugins/platforms/*"))
    return {
        "version": cks_desktop.__version__,
        "metadata_version": md.version("cks-desktop"),
        "frozen": bool(getattr(sys, "frozen", False)),
        "executable": sys.executable,
        "python": sys.version.split()[0],
        "keyring": {
            "entry_points": sorted(ep.name for ep in md.entry_points(group="keyring.backends")),
            "registered": registered,
            "viable": viable,
            "chosen": f"{type(chosen).__module__}.{type(chosen).__qualname__}",
        },
        "qt_platform_plugins": plugins,
        "imports": import_report(),
    }


def run() -> int:
    multiprocessing.freeze_support()  # a no-op unless a frozen child process is being started
    if sys.argv[1:] == ["--bundle-info"]:
        print(json.dumps(bundle_info(), indent=2))
        return 0
    from cks_desktop.cli import main

    return main()


if __name__ == "__main__":
    sys.exit(run())
