"""Qt's own file dialog (used where the platform has none, as under Xvfb) opens at a size its
columns fit in: name, size, type and date each whole, none past the view's right edge. The app
never forces it: a platform with a native dialog shows that one."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QTreeView, QWidget

from cks_desktop.ui import dialog_fit


def test_the_file_dialogs_columns_are_not_cut(qtbot, qapp, tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / f"a rather long document name number {i} from the archive.md").write_text("x" * 5000)
    dialog_fit.install(qapp)
    owner = QWidget()
    qtbot.addWidget(owner)
    owner.resize(1000, 680)
    owner.show()
    dialog = QFileDialog(owner, "Add documents to this session", str(tmp_path))
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog)  # the widget dialog a platform without one shows
    dialog.setViewMode(QFileDialog.ViewMode.Detail)
    dialog.open()
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
