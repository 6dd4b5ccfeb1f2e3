"""The ONE application-wide style sheet, generated from the tokens (LOOK.md pitfalls 2 and 10).

Rules select widget classes, a few unique object names of this app's regions (the sessions
sidebar, the graph toolbar, the status bar), and two dynamic properties that any widget can carry:

- ``cksRole``: ``title`` ``headline`` ``subtitle`` ``muted`` ``caption`` (labels), ``primary``
  ``danger`` (push buttons), ``icon`` (a 30 px icon-only tool button), ``card`` ``notice`` (frames
  and labels), ``chip`` (a pill label; its colour from ``cksTone``: ``success`` ``danger``
  ``warning`` ``accent``), ``code`` (a monospace text view);
- ``invalid="true"``: an input whose value is refused (a danger border), with ``cksRole="error"``
  for the sentence beside it.

Set them through ``theme.set_role`` / ``theme.set_invalid``, which re-polish the widget. Sizes are
in points derived from the system font (never ``px`` fonts: pitfall 1); lengths are in px.
Focus stays visible: inputs get an accent border, buttons an accent outline (pitfall 6).
"""

from __future__ import annotations

from string import Template

from cks_desktop.ui.theme.tokens import Tokens
from cks_desktop.ui.chat.sheet import SHEET as _CHAT_SHEET_TEXT

CHAT_SHEET = Template(_CHAT_SHEET_TEXT)

_SHEET = Template("""
* { outline: none; }
QWidget { color: $text; }
QMainWindow, QDialog { background: $background; }
QMainWindow::separator { background: $border; width: 1px; height: 1px; }
QMainWindow::separator:hover { background: $accent; }
QToolTip { color: $text; background: $surface; border: 1px solid $border_strong; padding: 4px 8px;
    border-radius: 4px; }

/* --- text roles ------------------------------------------------------------------------- */
QLabel[cksRole="headline"] { font-size: ${pt_headline}pt; font-weight: $title_weight; }
QLabel[cksRole="title"] { font-size: ${pt_title}pt; font-weight: $title_weight; }
QLabel[cksRole="subtitle"] { font-size: ${pt_subtitle}pt; font-weight: $title_weight; }
QLabel[cksRole="muted"] { color: $muted; }
QLabel[cksRole="caption"] { color: $muted; font-size: ${pt_caption}pt; }
QLabel[cksRole="section"] { color: $muted; font-size: ${pt_caption}pt; font-weight: $title_weight; }
QLabel[cksRole="error"] { color: $danger; }
QLabel[cksRole="danger"] { color: $danger; font-weight: $title_weight; }
QLabel[cksRole="success"] { color: $success; }
QLabel[cksRole="warning"] { color: $warning; }
QLabel[cksRole="notice"], QFrame[cksRole="notice"] { background: $warning_soft; color: $text;
    border: 1px solid $border; border-radius: ${r_row}px; padding: 8px 12px; }
QFrame[cksRole="card"] { background: $surface; border: 1px solid $border; border-radius: ${r_card}px; }
QLabel[cksRole="chip"] { background: $surface_alt; color: $muted; border-radius: 9px; padding: 1px 8px;
    font-size: ${pt_caption}pt; }
QLabel[cksRole="chip"][cksTone="success"] { background: $success_soft; color: $success; }
QLabel[cksRole="chip"][cksTone="danger"] { background: $danger_soft; color: $danger; }
QLabel[cksRole="chip"][cksTone="warning"] { background: $warning_soft; color: $warning; }
QLabel[cksRole="chip"][cksTone="accent"] { background: $accent_soft; color: $accent_soft_text; }
QLabel a { color: $link; }

/* --- buttons ------------------------------------------------------------------------------ */
QPushButton { background: $surface; color: $text; border: 1px solid $border_strong;
    border-radius: ${r_control}px; padding: 5px 14px; min-height: 20px; }
QPushButton:hover { background: $hover; }
QPushButton:pressed { background: $surface_alt; }
QPushButton:focus { border: 1px solid $accent; }
QPushButton:disabled { color: $disabled_text; border-color: $border; background: $background; }
QPushButton:default, QPushButton[cksRole="primary"] { background: $accent; color: $on_accent;
    border: 1px solid $accent; font-weight: $title_weight; }
QPushButton:default:hover, QPushButton[cksRole="primary"]:hover { background: $accent_hover;
    border-color: $accent_hover; }
QPushButton:default:focus, QPushButton[cksRole="primary"]:focus { border: 1px solid $text; }
QPushButton:default:disabled, QPushButton[cksRole="primary"]:disabled { background: $surface_alt;
    color: $disabled_text; border-color: $border; }
QPushButton[cksRole="danger"] { color: $danger; }
QPushButton[cksRole="flat"] { border-color: transparent; background: transparent; }
QPushButton[cksRole="flat"]:hover { background: $hover; }
QPushButton::menu-indicator { image: url($img_chevron_down); subcontrol-position: right center;
    subcontrol-origin: padding; width: 12px; }

QToolButton { background: transparent; color: $text; border: 1px solid transparent;
    border-radius: ${r_control}px; padding: 4px 6px; }
QToolButton:hover { background: $hover; }
QToolButton:pressed { background: $surface_alt; }
QToolButton:checked { background: $accent_soft; color: $accent_soft_text; }
QToolButton:focus { border: 1px solid $accent; }
QToolButton:disabled { color: $disabled_text; }
QToolButton[cksRole="icon"], QToolBar QToolButton { padding: 5px; }
QToolButton::menu-indicator { image: none; width: 0px; }
QToolButton#qt_toolbar_ext_button { padding: 2px; }
/* the Documents panel's Add (a tool button: it carries File → Add documents…) beside bordered push buttons */
QToolButton#documentsAdd { background: $surface; border: 1px solid $border_strong; padding: 5px 10px; }
QToolButton#documentsAdd:hover { background: $hover; }
QToolButton#documentsAdd:focus { border: 1px solid $accent; }

/* --- inputs ------------------------------------------------------------------------------- */
QLineEdit, QPlainTextEdit, QTextEdit, QSpinBox, QDoubleSpinBox, QComboBox {
    background: $surface; color: $text; border: 1px solid $border_strong;
    border-radius: ${r_control}px; selection-background-color: $accent; selection-color: $on_accent; }
QLineEdit, QSpinBox, QDoubleSpinBox, QComboBox { padding: 4px 8px; min-height: 20px; }
QPlainTextEdit, QTextEdit { padding: 4px; }
QLineEdit:focus, QPlainTextEdit:focus, QTextEdit:focus, QSpinBox:focus, QDoubleSpinBox:focus,
QComboBox:focus { border: 1px solid $accent; }
QLineEdit:disabled, QPlainTextEdit:disabled, QTextEdit:disabled, QSpinBox:disabled, QDoubleSpinBox:disabled,
QComboBox:disabled { color: $disabled_text; background: $sidebar; border-color: $border; }
QLabel:disabled { color: $disabled_text; }  /* a disabled form's labels too (Settings → Storage's connection) */
QLineEdit:read-only { background: $surface_alt; }
QTextBrowser { background: transparent; border: none; padding: 0; }
QPlainTextEdit:read-only, QTextEdit:read-only { background: $code_background; border: 1px solid $border;
    border-radius: ${r_row}px; }
QTextBrowser:read-only { background: transparent; border: none; }
QLineEdit[invalid="true"], QPlainTextEdit[invalid="true"], QSpinBox[invalid="true"],
QComboBox[invalid="true"] { border: 1px solid $danger; }
QTextEdit[cksRole="code"], QPlainTextEdit[cksRole="code"] { background: $code_background;
    border: 1px solid $border; border-radius: ${r_row}px; font-family: "$font_code"; font-size: ${pt_code}pt; }
QComboBox { padding-right: 24px; }
QComboBox::drop-down { subcontrol-origin: padding; subcontrol-position: center right; width: 22px;
    border: none; }
QComboBox::down-arrow { image: url($img_chevron_down); width: 14px; height: 14px; }
QComboBox::down-arrow:disabled { image: url($img_chevron_down_disabled); }
QComboBox QAbstractItemView { background: $surface; color: $text; border: 1px solid $border_strong;
    selection-background-color: $accent_soft; selection-color: $accent_soft_text; outline: none; padding: 4px; }
QSpinBox, QDoubleSpinBox { padding-right: 22px; }
QSpinBox::up-button, QDoubleSpinBox::up-button { subcontrol-origin: border; subcontrol-position: top right;
    width: 20px; border: none; border-top-right-radius: ${r_control}px; background: transparent; }
QSpinBox::down-button, QDoubleSpinBox::down-button { subcontrol-origin: border;
    subcontrol-position: bottom right; width: 20px; border: none; border-bottom-right-radius: ${r_control}px;
    background: transparent; }
QSpinBox::up-button:hover, QDoubleSpinBox::up-button:hover, QSpinBox::down-button:hover,
QDoubleSpinBox::down-button:hover { background: $hover; }
QSpinBox::up-arrow, QDoubleSpinBox::up-arrow { image: url($img_chevron_up); width: 12px; height: 12px; }
QSpinBox::down-arrow, QDoubleSpinBox::down-arrow { image: url($img_chevron_down); width: 12px; height: 12px; }
QSpinBox::up-arrow:disabled, QDoubleSpinBox::up-arrow:disabled { image: url($img_chevron_up_disabled); }
QSpinBox::down-arrow:disabled, QDoubleSpinBox::down-arrow:disabled { image: url($img_chevron_down_disabled); }

QCheckBox, QRadioButton { spacing: 8px; background: transparent; }
QCheckBox::indicator, QListView::indicator, QTreeView::indicator, QTableView::indicator {
    width: 16px; height: 16px; border: 1px solid $border_strong; border-radius: ${r_small}px;
    background: $surface; }
QRadioButton::indicator { width: 16px; height: 16px; border: 1px solid $border_strong; border-radius: 8px;
    background: $surface; }
QCheckBox::indicator:hover, QRadioButton::indicator:hover, QListView::indicator:hover { border-color: $accent; }
QCheckBox:focus { color: $accent_soft_text; }
QCheckBox::indicator:checked, QListView::indicator:checked, QTreeView::indicator:checked,
QTableView::indicator:checked { background: $accent; border-color: $accent; image: url($img_check); }
QCheckBox::indicator:indeterminate, QListView::indicator:indeterminate,
QTreeView::indicator:indeterminate { background: $accent; border-color: $accent; image: url($img_dash); }
QRadioButton::indicator:checked { background: $surface; border: 5px solid $accent; width: 8px; height: 8px;
    border-radius: 9px; }  /* the border adds to the size: 8 + 2×5 = 18 like the unchecked 16 + 2×1: round */
QCheckBox::indicator:disabled, QRadioButton::indicator:disabled { background: $surface_alt; border-color: $border; }
QCheckBox:disabled, QRadioButton:disabled { color: $disabled_text; }

/* --- item views --------------------------------------------------------------------------- */
QAbstractItemView { background: $background; color: $text; border: 1px solid $border;
    border-radius: ${r_row}px; alternate-background-color: $surface_alt;
    selection-background-color: $accent_soft; selection-color: $accent_soft_text; }
QAbstractItemView:focus { border-color: $accent; }
/* no vertical item padding by default: a list filled before it is first polished keeps the row
   heights it had without the sheet, and padded rows would overlap (the sidebar's list sets its own) */
QListView::item, QTreeView::item { padding: 0 6px; border-radius: ${r_small}px; }
QListView::item:hover, QTreeView::item:hover { background: $hover; }
QListView::item:selected, QTreeView::item:selected, QTableView::item:selected {
    background: $accent_soft; color: $accent_soft_text; }
QTreeView::branch { background: transparent; }
QTreeView::branch:has-children:closed { image: url($img_chevron_right); }
QTreeView::branch:has-children:open { image: url($img_chevron_down); }
QTableView { gridline-color: $border; }
QHeaderView { background: transparent; border: none; }
QHeaderView::section { background: $surface_alt; color: $muted; border: none; border-right: 1px solid $border;
    border-bottom: 1px solid $border; padding: 4px 8px; font-weight: $title_weight; }
QTableCornerButton::section { background: $surface_alt; border: none; }

/* --- containers ----------------------------------------------------------------------------- */
QGroupBox { background: $surface; border: 1px solid $border; border-radius: ${r_card}px;
    margin-top: 2.2em; padding: 12px; padding-top: 8px; }
QGroupBox::title { subcontrol-origin: margin; subcontrol-position: top left; left: 4px; top: 0.5em;
    padding: 0 4px; color: $text; font-weight: $title_weight; }
QTabWidget::pane { border: 1px solid $border; border-radius: ${r_row}px; background: $surface; top: -1px; }
QTabBar::tab { background: transparent; color: $muted; padding: 6px 14px; border: none;
    border-bottom: 2px solid transparent; }
QTabBar::tab:hover { color: $text; }
QTabBar::tab:selected { color: $text; border-bottom: 2px solid $accent; }
QScrollArea { background: transparent; border: none; }
QScrollArea > QWidget > QWidget { background: transparent; }
QStackedWidget { background: transparent; }
QSplitter::handle { background: $border; }
QSplitter::handle:horizontal { width: 1px; }
QSplitter::handle:vertical { height: 1px; }
QSplitter::handle:hover { background: $accent; }
QFrame[frameShape="4"], QFrame[frameShape="5"] { color: $border; }

QScrollBar:vertical { background: transparent; width: 10px; margin: 0; }
QScrollBar:horizontal { background: transparent; height: 10px; margin: 0; }
QScrollBar::handle { background: $border_strong; border-radius: 4px; margin: 2px; }
QScrollBar::handle:vertical { min-height: 24px; }
QScrollBar::handle:horizontal { min-width: 24px; }
QScrollBar::handle:hover { background: $faint; }
QScrollBar::add-line, QScrollBar::sub-line { width: 0; height: 0; border: none; background: none; }
QScrollBar::add-page, QScrollBar::sub-page { background: none; }

/* --- menus, bars, docks ------------------------------------------------------------------- */
QMenuBar { background: $background; color: $text; border-bottom: 1px solid $border; padding: 2px 4px; }
QMenuBar::item { background: transparent; padding: 4px 10px; border-radius: ${r_small}px; }
QMenuBar::item:selected { background: $hover; }
QMenu { background: $surface; color: $text; border: 1px solid $border_strong; padding: 4px; }
QMenu::item { padding: 6px 24px 6px 10px; border-radius: ${r_small}px; background: transparent; }
QMenu::item:selected { background: $accent_soft; color: $accent_soft_text; }
QMenu::item:disabled { color: $disabled_text; }
QMenu::icon { padding-left: 6px; }
QMenu::separator { height: 1px; background: $border; margin: 4px 6px; }
QMenu::indicator { width: 16px; height: 16px; left: 4px; }
QMenu::indicator:checked { image: url($img_check_menu); }
QMenu::right-arrow { image: url($img_chevron_right); width: 12px; height: 12px; }
QToolBar { background: $background; border: none; spacing: 2px; padding: 4px 6px; }
QToolBar::separator { background: $border; width: 1px; margin: 6px 4px; }
QStatusBar { background: $background; color: $muted; border-top: 1px solid $border; }
QStatusBar::item { border: none; }
QStatusBar QToolButton { color: $muted; padding: 1px 6px; }
QDockWidget { color: $text; titlebar-close-icon: url($img_close); titlebar-normal-icon: url($img_float); }
QDockWidget::title { background: $background; padding: 8px 10px; text-align: left;
    border-bottom: 1px solid $border; }
QDockWidget::close-button, QDockWidget::float-button { border: none; background: transparent; padding: 2px;
    border-radius: ${r_small}px; }
QDockWidget::close-button:hover, QDockWidget::float-button:hover { background: $hover; }
QDockWidget#sessionsDock::title { background: $sidebar; }
QWidget#sessionsSidebar { background: $sidebar; }
QWidget#sessionsSidebar QListView { background: $sidebar; border: none; }
QWidget#sessionsSidebar QListView::item { padding: 6px 8px; }
/* checkable tree rows: the 16 px boxes must not touch (lists use setSpacing instead: a list laid out
   before its first polish keeps unpadded row heights, and padding then clips its first row) */
QTreeWidget#extractionReviewTree::item { padding: 3px 6px; }
QWidget#graphLegend { background: $background; }
QWidget#graphLegend QListView { border: none; background: $background; }
QWidget#graphInspector { background: $background; }
QMessageBox, QInputDialog, QFileDialog { background: $background; }
QDialogButtonBox { dialogbuttonbox-buttons-have-icons: 0; }
QProgressBar { background: $surface_alt; border: none; border-radius: 4px; text-align: center; color: $muted; }
QProgressBar::chunk { background: $accent; border-radius: 4px; }
""")


def build(tokens: Tokens, scheme: str, base_pt: float, images: dict[str, str]) -> str:
    """The style sheet for ``scheme`` at the base font size ``base_pt``."""
    values: dict[str, object] = dict(tokens.palette(scheme))
    values.update({f"r_{k}": v for k, v in tokens.radius.items()})
    scale = tokens.type_scale
    for key in ("caption", "secondary", "body", "subtitle", "title", "headline", "code"):
        values[f"pt_{key}"] = f"{base_pt * float(scale[key]):.1f}"
    values["title_weight"] = int(scale["title_weight"])
    values["font_code"] = tokens.fonts["code"]
    values.update({f"img_{k}": v for k, v in images.items()})
    return _SHEET.substitute(values) + CHAT_SHEET.substitute(values)  # the chat's part: ui/chat/sheet.py
