"""Qt's own file dialog (used where the platform has none, as under Xvfb) opens at a size its
columns fit in: name, size, type and date each whole, none past the view's right edge. The app
never forces it: a platform with a native dialog shows that one."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QTreeView, QWidget

from cks_desktop.ui import dialog_fit


def _open(qtbot, qapp, folder: Path) -> tuple[QWidget, QFileDialog]:
    """Qt's own file dialog, the widget one a platform without a native dialog shows, over a window."""
    dialog_fit.install(qapp)
    owner = QWidget()
    qtbot.addWidget(owner)
    owner.resize(1000, 680)
    owner.show()
    dialog = QFileDialog(owner, "Add documents to this session", str(folder))
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog)
    dialog.setViewMode(QFileDialog.ViewMode.Detail)
    dialog.open()
    return owner, dialog  # the caller holds the owner: the dialog lives as long as it


def test_the_file_dialogs_columns_are_not_cut(qtbot, qapp, tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / f"a rather long document name number {i} from the archive.md").write_text("x" * 5000)
    _owner, dialog = _open(qtbot, qapp, tmp_path)
    qtbot.waitUntil(lambda: dialog.isVisible())
    assert dialog.width() >= dialog_fit.FILE_DIALOG_SIZE[0] and dialog.height() >= dialog_fit.FILE_DIALOG_SIZE[1]
    (view,) = [v for v in dialog.findChildren(QTreeView) if v.isVisible()]
    header = view.header()
    qtbot.waitUntil(lambda: view.model().rowCount(view.rootIndex()) == 3)
    view.resizeColumnToContents(1)
    total = sum(header.sectionSize(c) for c in range(header.count()) if not header.isSectionHidden(c))
    assert total <= view.viewport().width()  # no column runs past the right edge
    for column in range(1, header.count()):
        if not header.isSectionHidden(column):
            wanted = max(view.sizeHintForColumn(column), header.sectionSizeHint(column))
            assert header.sectionSize(column) >= wanted, (column, header.sectionSize(column), wanted)
    assert header.sectionSize(0) >= 250  # the name keeps the room left
    dialog.reject()


def test_the_places_panel_shows_every_place_whole(qtbot, qapp, tmp_path: Path) -> None:
    """The places on the dialog's left ("Computer", the home folder) are never cut to "Comp…", even
    when the dialog's saved state (Qt keeps the splitter between runs) left the panel narrow."""
    from PySide6.QtWidgets import QApplication, QListView, QSplitter

    from cks_desktop.ui import theme

    theme.install(qapp, "light")  # the theme pads each entry: that padding must fit too
    _owner, dialog = _open(qtbot, qapp, tmp_path)
    qtbot.waitUntil(lambda: dialog.isVisible())
    places = dialog.findChild(QListView, "sidebar")
    assert places is not None and places.isVisible()
    model = places.model()
    assert model.rowCount() >= 1
    splitter = dialog.findChild(QSplitter, "splitter")
    splitter.setSizes([40, sum(splitter.sizes()) - 40])  # as a saved state from an earlier run may leave it
    QApplication.processEvents()
    assert places.sizeHintForColumn(0) > places.viewport().width()  # cut now
    dialog_fit.widen_places(dialog)
    QApplication.processEvents()
    room = places.viewport().width()
    assert places.sizeHintForColumn(0) <= room  # the widest entry with the theme's padding fits
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        text = str(index.data())
        need = places.fontMetrics().horizontalAdvance(text) + places.iconSize().width()
        assert need <= room, (text, need, room)
        assert places.visualRect(index).width() >= need, (text, places.visualRect(index).width(), need)
    dialog.reject()
    theme.uninstall()
