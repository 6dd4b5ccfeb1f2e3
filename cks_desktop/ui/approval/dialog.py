"""The approval dialog: everything about the call, nothing hidden, Deny first.

Shows the tool's display name and where it comes from, the scopes it needs,
why it asks (its policy), the full arguments (monospace, scrollable, never
truncated) and, for built-in graph writes, the dry-run preview. Deny has the
initial focus; Esc and closing the window are Deny.

Everything shown comes from a model, a server or the graph, so it is shown as
plain text with its hidden characters revealed (``untrusted_text.reveal``): a
right-to-left override in a tool name or an argument would otherwise reorder
what the person reads and approves (``exe.txt`` reading ``txt.exe``), and a
zero-width character could hide a word. A note under the heading says when the
call contains any.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QShowEvent
from PySide6.QtWidgets import (QApplication, QDialog, QDialogButtonBox, QFormLayout, QLabel, QPlainTextEdit, QPushButton,
                               QVBoxLayout, QWidget)

from cks_desktop.tools.approval import ApprovalRequest, Decision, answer_words
from cks_desktop.ui.dialogs import run_dialog
from cks_desktop.ui import theme
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import describe_scopes, plain_tooltip, pretty_json
from cks_desktop.untrusted_text import describe_hidden, reveal


def _label(text: str) -> QLabel:
    """Plain text, hidden characters revealed, selectable."""
    return plain_label(reveal(text), wrap=True, selectable=True)


class ApprovalDialog(QDialog):
    def __init__(self, request: ApprovalRequest, parent: QWidget | None = None, *, session_title: str = "") -> None:
        super().__init__(parent)
        self.request = request
        self.decision = Decision.DENY
        self.opened_callback: Callable[[ApprovalDialog], None] | None = None
        tool = request.tool
        arguments = pretty_json(request.call.arguments)
        self.setObjectName("approvalDialog")
        self.setWindowTitle(reveal(f"Allow {tool.display_name}?"))
        self.setAccessibleName("Tool approval")
        self.setMinimumWidth(520)

        layout = QVBoxLayout(self)
        heading = _label(f"The assistant wants to run {tool.display_name}")
        heading.setObjectName("approvalHeading")
        font = heading.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        font.setBold(True)
        heading.setFont(font)
        layout.addWidget(heading)
        hidden = describe_hidden("\n".join([tool.display_name, tool.name, tool.source, session_title,
                                             request.preview or "", arguments]))
        self.hidden_label = _label(hidden) if hidden else None
        if self.hidden_label is not None:
            self.hidden_label.setObjectName("approvalHiddenCharacters")
            theme.set_role(self.hidden_label, "danger")
            layout.addWidget(self.hidden_label)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        source = (f"MCP server “{tool.source[4:]}” (tool {tool.name.rsplit(':', 1)[-1]})"
                  if tool.source.startswith("mcp:") else f"built-in tool ({tool.name})")
        self.source_label = _label(source)
        self.source_label.setObjectName("approvalSource")
        form.addRow("From:", self.source_label)
        if session_title:
            form.addRow("Session:", _label(session_title))
        scopes = describe_scopes(request.scopes) or ["none"]
        self.scopes_label = _label("\n".join(scopes))
        self.scopes_label.setObjectName("approvalScopes")
        form.addRow("Needs:", self.scopes_label)
        self.reason_label = _label(f"{request.reason} (policy: {request.policy.value})")
        self.reason_label.setObjectName("approvalReason")
        form.addRow("Why ask:", self.reason_label)
        if request.preview:
            self.preview_label: QLabel | None = _label(request.preview)
            self.preview_label.setObjectName("approvalPreview")
            form.addRow("This call:", self.preview_label)
        else:
            self.preview_label = None
        layout.addLayout(form)

        layout.addWidget(_label("Arguments, in full:"))
        self.arguments_view = QPlainTextEdit()
        self.arguments_view.setObjectName("approvalArguments")
        self.arguments_view.setAccessibleName("Arguments")
        self.arguments_view.setReadOnly(True)
        self.arguments_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.arguments_view.setPlainText(reveal(arguments))
        self.arguments_view.setTabChangesFocus(True)
        self.arguments_view.setMinimumHeight(140)
        layout.addWidget(self.arguments_view, 1)

        buttons = QDialogButtonBox()
        words = answer_words(request)
        self.allow_button = QPushButton(words.allow)
        self.allow_button.setObjectName("allowButton")
        self.allow_button.setToolTip(plain_tooltip(reveal(words.allow_tip)))
        self.allow_run_button = QPushButton(words.allow_for_run or "", self)
        self.allow_run_button.setObjectName("allowRunButton")
        self.allow_run_button.setToolTip(plain_tooltip(reveal(words.allow_for_run_tip)))
        if words.allow_for_run is None:  # it would decide nothing more than Allow
            self.allow_run_button.hide()
        self.deny_button = QPushButton(words.deny)
        self.deny_button.setObjectName("denyButton")
        self.deny_button.setToolTip(plain_tooltip(reveal(words.deny_tip)))
        for button in (self.allow_button, self.allow_run_button, self.deny_button):
            button.setAutoDefault(False)
            button.setAccessibleName(button.text().replace("&", ""))
        buttons.addButton(self.deny_button, QDialogButtonBox.ButtonRole.RejectRole)
        if words.allow_for_run is not None:
            buttons.addButton(self.allow_run_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.allow_button, QDialogButtonBox.ButtonRole.AcceptRole)
        layout.addWidget(buttons)
        self.deny_button.setDefault(True)
        self.allow_button.clicked.connect(lambda: self._answer(Decision.ALLOW))
        self.allow_run_button.clicked.connect(lambda: self._answer(Decision.ALLOW_FOR_RUN))
        self.deny_button.clicked.connect(self.reject)
        self.setTabOrder(self.deny_button, self.allow_run_button)
        self.setTabOrder(self.allow_run_button, self.allow_button)
        self.resize(640, 480)

    def _answer(self, decision: Decision) -> None:
        self.decision = decision
        self.accept()

    def reject(self) -> None:  # Esc, the close button and Deny all land here
        self.decision = Decision.DENY
        super().reject()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt naming)
        super().showEvent(event)
        self.deny_button.setFocus(Qt.FocusReason.OtherFocusReason)
        if self.opened_callback is not None:
            callback, self.opened_callback = self.opened_callback, None
            callback(self)


def dialog_presenter(parent: Callable[[], QWidget | None],
                     session_title: Callable[[str], str] = lambda _id: "",
                     on_open: Callable[[ApprovalDialog], None] | None = None,
                     ) -> Callable[[ApprovalRequest], Awaitable[Decision]]:
    """The ``present`` coroutine ``GuiApprover`` uses: open the dialog, await the answer.

    ``on_open`` hears about each dialog once it is open (the main window turns
    it into a signal that tests and the self-test wait on).
    """

    async def present(request: ApprovalRequest) -> Decision:
        owner = parent()
        dialog = ApprovalDialog(request, owner, session_title=session_title(request.session_id))
        if owner is not None:
            QApplication.alert(owner)  # flash the taskbar entry when the window is in the background
        try:
            if on_open is not None:
                dialog.opened_callback = on_open
            await run_dialog(dialog)
            return dialog.decision
        finally:
            dialog.deleteLater()

    return present
