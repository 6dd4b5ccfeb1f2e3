"""The approval dialog shows bidi controls and invisible characters visibly.

A right-to-left override in a tool's name or an argument reorders what the
person reads before they approve (``invoice‮txt.exe`` reads ``invoiceexe.txt``);
a zero-width space hides inside a word. Every text the dialog shows — title,
heading, source, session, preview, the arguments in full, the tooltip — has
them revealed as ``\\u202e``, and a note under the heading names them.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from cks_desktop.ui.approval.dialog import ApprovalDialog
from cks_desktop.untrusted_text import is_hidden

from tests.ui.helpers import approval_request, tool_spec

RLO, ZWSP, LRI = "\u202e", "\u200b", "\u2066"


def _visible_texts(dialog: ApprovalDialog) -> list[str]:
    texts = [dialog.windowTitle(), dialog.arguments_view.toPlainText(), dialog.allow_run_button.toolTip()]
    texts += [label.text() for label in dialog.findChildren(QLabel)]
    return texts


def test_hidden_characters_are_revealed_everywhere_in_the_dialog(qtbot) -> None:
    spec = tool_spec(f"mcp:files:open{RLO}fdp", source="mcp:files", title=f"Open{RLO}fdp.exe")
    request = approval_request({"path": f"invoice{RLO}txt.exe", "note": f"pay{ZWSP}now", "x": f"{LRI}a\x1b[8m"},
                               spec=spec, preview=f"Opens invoice{RLO}txt.exe")
    dialog = ApprovalDialog(request, session_title=f"Work{ZWSP}")
    qtbot.addWidget(dialog)
    dialog.show()
    for text in _visible_texts(dialog):
        assert not any(is_hidden(c) for c in text if c != "\n"), repr(text)
    assert '"path": "invoice\\u202etxt.exe"' in dialog.arguments_view.toPlainText()
    assert '"note": "pay\\u200bnow"' in dialog.arguments_view.toPlainText()
    assert "Open\\u202efdp.exe" in dialog.windowTitle()
    assert dialog.hidden_label is not None and dialog.hidden_label.isVisible()
    note = dialog.hidden_label.text()
    assert "direction-changing" in note and "\\u202e right-to-left override" in note


def test_an_ordinary_call_has_no_note(qtbot) -> None:
    dialog = ApprovalDialog(approval_request({"name": "Zoë 東京 👨‍👩‍👧"}), session_title="Work")
    qtbot.addWidget(dialog)
    assert dialog.hidden_label is None
    assert '"name": "Zoë 東京 👨‍👩‍👧"' in dialog.arguments_view.toPlainText()
