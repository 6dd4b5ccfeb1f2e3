"""Sub-control images for the style sheet: combo arrow, spin arrows, check mark, dock buttons.

A style sheet that restyles a combo box, spin box or check box loses the native arrows and marks,
and QSS can only draw them from image files (LOOK.md pitfall 9). They are tiny SVGs whose colour
comes from the tokens, so they are written per scheme into a private temporary folder (removed at
exit) instead of being kept as a second copy of the palette in resources.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

_SVGS = {
    "chevron-down": '<path d="M4 6l4 4 4-4" fill="none" stroke="{c}" stroke-width="1.6" '
                    'stroke-linecap="round" stroke-linejoin="round"/>',
    "chevron-up": '<path d="M4 10l4-4 4 4" fill="none" stroke="{c}" stroke-width="1.6" '
                  'stroke-linecap="round" stroke-linejoin="round"/>',
    "chevron-right": '<path d="M6 4l4 4-4 4" fill="none" stroke="{c}" stroke-width="1.6" '
                     'stroke-linecap="round" stroke-linejoin="round"/>',
    "check": '<path d="M3.5 8.5l3 3 6-7" fill="none" stroke="{c}" stroke-width="2" '
             'stroke-linecap="round" stroke-linejoin="round"/>',
    "check-menu": '<path d="M3.5 8.5l3 3 6-7" fill="none" stroke="{c}" stroke-width="2" '
                  'stroke-linecap="round" stroke-linejoin="round"/>',
    "dash": '<path d="M4 8h8" fill="none" stroke="{c}" stroke-width="2" stroke-linecap="round"/>',
    "close": '<path d="M4.5 4.5l7 7M11.5 4.5l-7 7" fill="none" stroke="{c}" stroke-width="1.5" '
             'stroke-linecap="round"/>',
    "float": '<rect x="3.5" y="5.5" width="7" height="7" rx="1.5" fill="none" stroke="{c}" stroke-width="1.3"/>'
             '<path d="M6 3.5h5a1.5 1.5 0 0 1 1.5 1.5v5" fill="none" stroke="{c}" stroke-width="1.3"/>',
}
# the colour token each image is drawn in (each also gets a "-disabled" variant)
IMAGES = {
    "chevron-down": "muted", "chevron-up": "muted", "chevron-right": "muted",
    "check": "on_accent", "check-menu": "accent", "dash": "on_accent", "close": "muted", "float": "muted",
}
_root: Path | None = None


def _folder() -> Path:
    global _root
    if _root is None:
        _root = Path(tempfile.mkdtemp(prefix="cks-theme-"))
        atexit.register(shutil.rmtree, _root, True)
    return _root


def write_images(scheme: str, colours: dict[str, str]) -> dict[str, str]:
    """Write the scheme's images (once per scheme and colours); name → path usable in ``url()``."""
    folder = _folder() / scheme
    folder.mkdir(exist_ok=True)
    out: dict[str, str] = {}
    for name, token in IMAGES.items():
        for variant, colour in ((name, colours[token]), (f"{name}-disabled", colours["disabled_text"])):
            path = folder / f"{variant}.svg"
            body = ('<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">'
                    + _SVGS[name].format(c=colour) + "</svg>")
            if not path.is_file() or path.read_text(encoding="utf-8") != body:
                path.write_text(body, encoding="utf-8")
            out[variant.replace("-", "_")] = path.as_posix()
    return out
