"""Settings → Chat & agent: the iteration cap, per-tool approval policies, the
scopes chats grant by default, the folders ``read_text_file`` may read, and how
Enter behaves in the chat.

A policy chosen here persists across restarts ("always allow" that does not
forget itself); "Reset remembered choices" puts every tool back to its
default.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QFileDialog, QFormLayout, QGridLayout,
                               QGroupBox, QHBoxLayout, QHeaderView, QLineEdit, QListWidget, QPushButton, QSpinBox,
                               QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from cks_desktop.settings import Agent, Settings, Ui
from cks_desktop.tools.scopes import DEFAULT_GRANT, parse_scopes
from cks_desktop.tools.types import Scope
from cks_desktop.ui.settings.widgets import note_label
from cks_desktop.ui.text import SCOPE_WORDS, plain_tooltip

if TYPE_CHECKING:
    from cks_desktop.tools.registry import ToolRegistry

POLICIES = ("auto", "once", "always")
POLICY_WORDS = {"auto": "never ask", "once": "ask once per reply", "always": "ask for every call"}


class AgentPage(QWidget):
    changed = Signal()

    def __init__(self, settings: Settings, registry: "ToolRegistry") -> None:
        super().__init__()
        self.setObjectName("agentPage")
        layout = QVBoxLayout(self)

        chat = QGroupBox("Chat")
        chat_form = QFormLayout(chat)
        self.cap = QSpinBox()
        self.cap.setObjectName("iterationCap")
        self.cap.setRange(1, 200)
        self.cap.setValue(settings.max_iterations)
        self.cap.setToolTip("How many model turns one reply may use before it stops and offers Continue.")
        chat_form.addRow("Model turns per reply:", self.cap)
        # the defaults every session uses unless its own Chat settings… set one
        agent = settings.section(Agent)
        self.temperature = QLineEdit("" if agent.temperature is None else f"{agent.temperature:g}")
        self.temperature.setObjectName("defaultTemperature")
        self.temperature.setPlaceholderText("the provider's default")
        self.temperature.setToolTip("0 to 2; empty: not sent, the provider's own default applies")
        chat_form.addRow("Temperature:", self.temperature)
        self.max_tokens = QLineEdit("" if agent.max_output_tokens is None else str(agent.max_output_tokens))
        self.max_tokens.setObjectName("defaultMaxTokens")
        self.max_tokens.setPlaceholderText("the provider's default")
        self.max_tokens.setToolTip("Max output tokens per model turn; empty: the provider's own default")
        chat_form.addRow("Max output tokens:", self.max_tokens)
        # the thinking default of sessions without their own choice (agent.reasoning)
        from cks_desktop.agent.session_settings import default_reasoning

        thinks, budget = default_reasoning(settings)
        self.reasoning = QCheckBox("Think before answering (models that can; shown collapsed above the answer)")
        self.reasoning.setObjectName("defaultReasoning")
        self.reasoning.setChecked(thinks)
        self.reasoning.setToolTip("Default for sessions without their own choice in Chat settings…")
        chat_form.addRow(self.reasoning)
        self.reasoning_budget = QLineEdit("" if budget is None else str(budget))
        self.reasoning_budget.setObjectName("defaultReasoningBudget")
        self.reasoning_budget.setPlaceholderText("the provider's default")
        self.reasoning_budget.setToolTip("Tokens the model may think for; empty: the provider's own default")
        chat_form.addRow("Thinking budget (tokens):", self.reasoning_budget)
        self.enter_sends = QCheckBox("Enter sends the message (Shift+Enter starts a new line)")
        self.enter_sends.setObjectName("enterSends")
        self.enter_sends.setChecked(settings.section(Ui).enter_sends)
        chat_form.addRow(self.enter_sends)
        layout.addWidget(chat)
        from cks_desktop.ui.extraction.cap_box import ExtractionCapBox

        self.extraction_cap = ExtractionCapBox(settings)  # ask before a costly extraction
        layout.addWidget(self.extraction_cap)

        tools = QGroupBox("When to ask before a tool runs")
        tools_layout = QVBoxLayout(tools)
        self.table = QTableWidget(0, 3)
        self.table.setObjectName("toolPolicyTable")
        self.table.setHorizontalHeaderLabels(["Tool", "Default", "Policy"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.policy_boxes: dict[str, QComboBox] = {}
        overrides = settings.tool_policies
        for spec in registry.specs():
            if not spec.llm_exposed:
                continue
            row = self.table.rowCount()
            self.table.insertRow(row)
            name_item = QTableWidgetItem(spec.display_name)
            name_item.setToolTip(plain_tooltip(f"{spec.name}\n{spec.description[:300]}"))
            self.table.setItem(row, 0, name_item)
            self.table.setItem(row, 1, QTableWidgetItem(spec.default_policy.value))
            box = QComboBox()
            box.addItem(f"default ({spec.default_policy.value})", "")
            for policy in POLICIES:
                box.addItem(f"{policy} — {POLICY_WORDS[policy]}", policy)
            box.setCurrentIndex(max(0, box.findData(overrides.get(spec.name, ""))))
            box.currentIndexChanged.connect(lambda _i: self.changed.emit())
            self.table.setCellWidget(row, 2, box)
            self.policy_boxes[spec.name] = box
        # Overrides for tools not registered right now (an MCP server that is off) are kept as they are.
        self._other_overrides = {k: v for k, v in overrides.items() if k not in self.policy_boxes}
        tools_layout.addWidget(self.table)
        reset_row = QHBoxLayout()
        self.reset_button = QPushButton("Reset remembered choices")
        self.reset_button.setObjectName("resetPolicies")
        self.reset_button.setAutoDefault(False)
        self.reset_button.setToolTip("Put every tool back to its default policy (applied when you save).")
        self.reset_button.clicked.connect(self.reset_policies)
        reset_row.addWidget(self.reset_button)
        reset_row.addStretch(1)
        tools_layout.addLayout(reset_row)
        layout.addWidget(tools, 1)  # the tool list gets the room

        scopes = QGroupBox("What chats may use, unless a session chooses otherwise")
        scopes.setObjectName("defaultScopes")
        scopes_layout = QGridLayout(scopes)
        chosen = parse_scopes(settings.default_scopes) if settings.default_scopes is not None else DEFAULT_GRANT
        self.scope_boxes: dict[Scope, QCheckBox] = {}
        for i, scope in enumerate(Scope):
            scope_box = QCheckBox(f"{scope.value} — {SCOPE_WORDS.get(scope.value, scope.value)}")
            scope_box.setObjectName(f"defaultScope:{scope.value}")
            scope_box.setChecked(scope in chosen)
            scope_box.toggled.connect(lambda _v: self.changed.emit())
            self.scope_boxes[scope] = scope_box
            scopes_layout.addWidget(scope_box, i // 2, i % 2)
        scopes_layout.addWidget(note_label(
            "A session's own choice (right-click it → Scopes…) wins; an MCP server can be granted its scopes in "
            "its editor. Reading files also needs an allowed folder below."), (len(Scope) + 1) // 2, 0, 1, 2)
        layout.addWidget(scopes)

        folders = QGroupBox("Folders the assistant may read files from (read_text_file)")
        folders_layout = QVBoxLayout(folders)
        self.folders = QListWidget()
        self.folders.setObjectName("allowedFolders")
        self.folders.setMaximumHeight(self.folders.fontMetrics().lineSpacing() * 5 + 8)
        for folder in agent.allowed_folders:
            if folder:
                self.folders.addItem(folder)
        folders_layout.addWidget(self.folders)
        buttons = QHBoxLayout()
        self.add_folder_button = QPushButton("Add folder…")
        self.add_folder_button.setAutoDefault(False)
        self.remove_folder_button = QPushButton("Remove")
        self.remove_folder_button.setAutoDefault(False)
        buttons.addWidget(self.add_folder_button)
        buttons.addWidget(self.remove_folder_button)
        buttons.addStretch(1)
        folders_layout.addLayout(buttons)
        folders_layout.addWidget(note_label("Files outside these folders are refused, symbolic links included."))
        layout.addWidget(folders)

        # what tokens cost (agent.prices); a model in neither table shows tokens only
        from cks_desktop.ui.settings.prices_table import PricesTable

        prices = QGroupBox("Prices (US dollars per million tokens)")
        prices_layout = QVBoxLayout(prices)
        self.prices = PricesTable()
        self.prices.set_prices(settings.section(Agent).prices)
        self.prices.changed.connect(self.changed.emit)
        prices_layout.addWidget(self.prices)
        prices_layout.addWidget(note_label(
            "Known OpenAI, Anthropic and Google models have built-in prices; a row here wins. Name a model "
            "(gpt-4o) or a provider's model (openai/qwen2.5-7b). A model without a price shows tokens only."))
        layout.addWidget(prices)

        self.cap.valueChanged.connect(lambda _v: self.changed.emit())
        self.enter_sends.toggled.connect(lambda _v: self.changed.emit())
        self.reasoning.toggled.connect(lambda _v: self.changed.emit())
        self.add_folder_button.clicked.connect(self.choose_folder)
        self.remove_folder_button.clicked.connect(self._remove_folder)
        self._folder_dialog: QFileDialog | None = None

    def reset_policies(self) -> None:
        for box in self.policy_boxes.values():
            box.setCurrentIndex(0)
        self._other_overrides = {}
        self.changed.emit()

    def choose_folder(self) -> None:
        dialog = QFileDialog(self, "Allow a folder")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(self.add_folder)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self._folder_dialog = dialog
        dialog.open()  # never exec(): the chat keeps running behind it

    def add_folder(self, folder: str) -> None:
        folder = str(Path(folder).expanduser())
        if folder and not self.folders.findItems(folder, Qt.MatchFlag.MatchExactly):
            self.folders.addItem(folder)
            self.changed.emit()

    def _remove_folder(self) -> None:
        for item in self.folders.selectedItems():
            self.folders.takeItem(self.folders.row(item))
        self.changed.emit()

    def errors(self) -> list[str]:
        from cks_desktop.agent.session_settings import (SessionSettingsError, check_max_tokens,
                                                        check_reasoning_budget, check_temperature)

        problems = []
        for check, field in ((check_temperature, self.temperature), (check_max_tokens, self.max_tokens),
                             (check_reasoning_budget, self.reasoning_budget)):
            try:
                check(field.text())
            except SessionSettingsError as exc:
                problems.append(str(exc))
        problems += self.prices.errors()
        problems += self.extraction_cap.errors()
        return problems

    def save(self, settings: Settings) -> None:
        settings.max_iterations = self.cap.value()
        from cks_desktop.agent.session_settings import SessionSettingsError, set_default_params

        from cks_desktop.agent.session_settings import set_default_reasoning

        try:
            set_default_params(settings, self.temperature.text(), self.max_tokens.text())
        except SessionSettingsError:
            pass  # errors() said so before Save; an invalid field keeps the stored value
        try:
            set_default_reasoning(settings, self.reasoning.isChecked(), self.reasoning_budget.text())
        except SessionSettingsError:
            pass
        settings.set_section(replace(settings.section(Ui), enter_sends=self.enter_sends.isChecked()))
        self.extraction_cap.save(settings)
        policies = dict(self._other_overrides)
        for name, box in self.policy_boxes.items():
            if box.currentData():
                policies[name] = box.currentData()
        folders = tuple(self.folders.item(i).text() for i in range(self.folders.count()))
        settings.set_section(replace(settings.section(Agent), tool_policies=policies, allowed_folders=folders,
                                     prices=self.prices.prices()))
        ticked = frozenset(s for s, box in self.scope_boxes.items() if box.isChecked())
        # The built-in defaults are stored as "no choice", so a later version's defaults still apply.
        settings.set_default_scopes(None if ticked == DEFAULT_GRANT else sorted(s.value for s in ticked))
