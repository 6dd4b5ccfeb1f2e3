"""What Help → About credits, as the licences of the bundled design assets ask.

Inter and JetBrains Mono (SIL OFL 1.1) require the copyright notice and licence to travel with
them: the licence files sit beside the fonts in ``resources/fonts/`` and About names them. The
Phosphor icons (MIT) come in the ``qtawesome`` package (MIT), whose licence ships with it.
"""

from __future__ import annotations

from cks_desktop.ui.theme.fonts import FONTS_DIR

CREDITS = (
    "Icons: Phosphor Icons (MIT), through QtAwesome (MIT).",
    "Fonts: Inter © The Inter Project Authors; JetBrains Mono © The JetBrains Mono Project Authors; "
    "both under the SIL Open Font License 1.1.",
)


def credits_text() -> str:
    return "\n".join(CREDITS) + f"\nFont licences: {FONTS_DIR}"
