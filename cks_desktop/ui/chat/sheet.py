"""The chat's section of the ONE application style sheet (appended by ``ui/theme/qss.build``).

One sheet for the whole app, not one per chat item: a sheet per widget costs about a
millisecond each (LOOK.md pitfall 2). Same ``$token`` placeholders as the rest of the sheet;
the rules select the chat's own object names (``chatBubble``, ``chatCodeBlock``,
``toolCallRow``…) and ``toolCallRow``'s ``kind`` property. No imports: ``ui/theme`` reads it
while it is itself being imported.
"""

SHEET = """
/* --- chat (cks_desktop/ui/chat/style.py) -------------------------------------------------- */
QWidget#chatContainer { background: $background; }
QFrame#chatBubble { background: $surface_alt; border: none; border-radius: ${r_bubble}px; }
QFrame#chatMessage_notice { background: $warning_soft; border: 1px solid $border; border-radius: ${r_row}px; }
QFrame#chatMessage_error { background: $danger_soft; border: 1px solid $border; border-radius: ${r_row}px; }
QLabel#chatRoleName { font-weight: $title_weight; }
QLabel#chatModelName { color: $muted; font-size: ${pt_secondary}pt; }
QLabel#unansweredLabel { color: $warning; font-size: ${pt_caption}pt; }
QWidget#chatActions QToolButton, QWidget#chatActions QPushButton { color: $muted; background: transparent;
    border: 1px solid transparent; border-radius: ${r_small}px; padding: 1px 6px; min-height: 0;
    font-size: ${pt_caption}pt; }
QWidget#chatActions QToolButton:hover, QWidget#chatActions QPushButton:hover { background: $hover; color: $text; }
QWidget#chatActions QToolButton:focus, QWidget#chatActions QPushButton:focus { border-color: $accent; }
QFrame#chatCodeBlock { background: $code_background; border: 1px solid $border; border-radius: ${r_row}px; }
QWidget#chatCodeHeader { background: transparent; border: none; border-bottom: 1px solid $border; }
QLabel#chatCodeLanguage { color: $muted; font-size: ${pt_caption}pt; }
QFrame#chatCodeBlock QPlainTextEdit { background: transparent; border: none; border-radius: 0; padding: 0; }
QFrame#chatCodeBlock QPushButton { color: $muted; background: transparent; border: 1px solid transparent;
    border-radius: ${r_small}px; padding: 1px 6px; min-height: 0; font-size: ${pt_caption}pt; font-weight: normal; }
QFrame#chatCodeBlock QPushButton:hover { background: $hover; color: $text; }
QFrame#chatCodeBlock QPushButton:focus { border-color: $accent; }
QFrame#toolCallRow { background: $surface; border: 1px solid $border; border-radius: ${r_row}px; }
QFrame#toolCallRow:hover { border-color: $border_strong; }
QFrame#toolCallRow[kind="error"] { background: $danger_soft; border-color: $danger; }
QFrame#toolCallRow[kind="attention"] { border-color: $accent; }
QFrame#toolCallRow[kind="muted"] QLabel#toolCallName { color: $muted; }
QLabel#toolCallName { font-weight: $title_weight; }
QLabel#toolCallSummary { color: $muted; }
QLabel#toolCallSection { color: $muted; font-size: ${pt_caption}pt; font-weight: $title_weight; }
QFrame#toolCallRow QToolButton#toolCallToggle { padding: 0; border: none; background: transparent; }
QFrame#toolCallRow QPushButton#revertButton { padding: 1px 8px; min-height: 0; font-size: ${pt_secondary}pt; }
QFrame#toolCallRow[kind="error"] QFrame#chatCodeBlock { background: $surface; }
QFrame#reasoningView { border: none; border-left: 2px solid $border; }
QFrame#reasoningView QToolButton#reasoningToggle { color: $muted; background: transparent; border: none;
    padding: 0; font-size: ${pt_secondary}pt; }
QFrame#reasoningView QToolButton#reasoningToggle:hover { color: $text; }
QLabel#reasoningText { color: $muted; font-size: ${pt_secondary}pt; }
QLabel#chatUsage, QLabel#chatSessionUsage { color: $muted; font-size: ${pt_caption}pt; }
QFrame#limitBanner { background: $surface; border: 1px solid $border_strong; border-radius: ${r_row}px;
    margin: 0 6px; }
"""
