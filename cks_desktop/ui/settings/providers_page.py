"""Settings → Providers: which provider the chat uses, and each one's model, URL and key.

Keys go to the keychain through ``SecretStore`` and are never shown: the field
is masked and starts empty ("a key is saved" says so); typing replaces it on
Save. Without a secure keychain a notice says keys last for this run only.
"Test" makes one tiny request with what is in the form (saved or not) and
reports the result in plain words; "Fetch models" fills the model list from
the provider where it can list them.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cks_desktop.llm.profiles import PROVIDER_NAMES, profile_for
from cks_desktop.llm.provider import ProviderProfile

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLineEdit,
                               QPushButton, QSpinBox, QTabWidget, QVBoxLayout, QWidget)

from cks_desktop.settings import Settings
from cks_desktop.ui.settings.validation import check_model, check_url
from cks_desktop.ui.settings.widgets import mark, note_label
from cks_desktop.ui.tasks import TaskTracker
from cks_desktop.ui import theme
from cks_desktop.plural import counted

if TYPE_CHECKING:
    from cks_desktop.llm.provider import Provider
    from cks_desktop.secrets import SecretStore

log = logging.getLogger(__name__)
TEST_PROMPT = "Reply with the single word OK."
TEST_TIMEOUT = 30.0


def secret_ref(name: str) -> str:
    return f"provider:{name}"


def url_hint(profile: ProviderProfile) -> str:
    """The base URL field's placeholder: what an empty field means."""
    hint = f"empty: {profile.default_base_url}"
    if profile.compatible_servers:
        hint += " — or your server, e.g. http://127.0.0.1:1234/v1"
    return hint


class ProviderForm(QWidget):
    """The fields of one provider."""

    changed = Signal()

    def __init__(self, name: str, settings: Settings, secrets: "SecretStore", tasks: TaskTracker) -> None:
        super().__init__()
        self.name = name
        self.profile = profile = profile_for(name)
        self.secrets = secrets
        self.tasks = tasks
        entry = settings.provider_entry(name)
        self.setObjectName(f"providerForm_{name}")
        form = QFormLayout(self)

        model_row = QHBoxLayout()
        self.model_box = QComboBox()
        self.model_box.setObjectName(f"{name}Model")
        self.model_box.setEditable(True)
        self.model_box.setEditText(entry.model)
        self.fetch_button = QPushButton("Fetch models")
        self.fetch_button.setObjectName(f"{name}FetchModels")
        self.fetch_button.setAutoDefault(False)
        model_row.addWidget(self.model_box, 1)
        model_row.addWidget(self.fetch_button)
        self.fetch_button.setVisible(profile.can_list_models)
        form.addRow("Model:", model_row)

        self.url_edit = QLineEdit(entry.base_url)
        self.url_edit.setObjectName(f"{name}BaseUrl")
        self.url_edit.setPlaceholderText(url_hint(profile))
        form.addRow("Base URL:", self.url_edit)

        self.key_edit: QLineEdit | None = None
        self.key_status = note_label()
        if profile.needs_api_key:
            key_row = QHBoxLayout()
            self.key_edit = QLineEdit()
            self.key_edit.setObjectName(f"{name}ApiKey")
            self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
            self.key_edit.setAccessibleName(f"{profile.display_name} API key")
            self.show_key = QCheckBox("Show")
            self.show_key.toggled.connect(lambda on: self.key_edit.setEchoMode(
                QLineEdit.EchoMode.Normal if on else QLineEdit.EchoMode.Password))
            self.forget_button = QPushButton("Remove saved key")
            self.forget_button.setAutoDefault(False)
            self.forget_button.clicked.connect(self._forget_key)
            key_row.addWidget(self.key_edit, 1)
            key_row.addWidget(self.show_key)
            key_row.addWidget(self.forget_button)
            form.addRow("API key:", key_row)
            form.addRow("", self.key_status)
            self.key_edit.textChanged.connect(self.changed)
        self._forget = False

        self.num_ctx: QSpinBox | None = None
        if "num_ctx" in profile.setting_options:
            self.num_ctx = QSpinBox()
            self.num_ctx.setRange(2048, 1_048_576)
            self.num_ctx.setSingleStep(2048)
            self.num_ctx.setValue(entry.num_ctx or 16384)
            self.num_ctx.setToolTip("Context window in tokens; Ollama's small default cuts off tool definitions.")
            form.addRow("Context (num_ctx):", self.num_ctx)

        # whether the model takes images (llm/vision.py); automatic = the profile's table
        # of known vision models, or (Ollama) what the server says about the model.
        self.images_box = QComboBox()
        self.images_box.setObjectName(f"{name}Images")
        for label, value in (("Automatic (known models)", ""), ("The model takes images", "yes"),
                             ("The model takes no images", "no")):
            self.images_box.addItem(label, value)
        self.images_box.setCurrentIndex(max(0, self.images_box.findData(entry.images or "")))
        self.images_box.setToolTip(
            "Whether images (a tool's screenshots, pictures you paste) are sent to the model as images; automatic "
            "asks the server (Ollama) or the table of known vision models" if profile.images_from_server else
            "Whether images (a tool's screenshots, pictures you paste) are sent to the model as images; automatic "
            "asks the table of known vision models")
        self.images_box.currentIndexChanged.connect(lambda _i: self.changed.emit())
        form.addRow("Images:", self.images_box)

        # another wire API of the provider (OpenAI's Responses API), ``api`` in settings.
        self.api_box: QComboBox | None = None
        if profile.alternate_apis:
            self.api_box = QComboBox()
            self.api_box.setObjectName(f"{name}Api")
            self.api_box.addItem("Chat Completions (every compatible server)", "")
            for value, label, _adapter in profile.alternate_apis:
                self.api_box.addItem(label, value)
            self.api_box.setCurrentIndex(max(0, self.api_box.findData(entry.api or "")))
            self.api_box.setToolTip("Which of the provider's APIs the app talks to; OpenAI shows what its reasoning "
                                    "models thought only through the Responses API")
            self.api_box.currentIndexChanged.connect(lambda _i: self.changed.emit())
            form.addRow("API:", self.api_box)

        test_row = QHBoxLayout()
        self.test_button = QPushButton("Test")
        self.test_button.setObjectName(f"{name}Test")
        self.test_button.setAutoDefault(False)
        self.test_result = note_label()
        self.test_result.setObjectName(f"{name}TestResult")
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.test_result, 1)
        form.addRow("", test_row)

        self.model_box.editTextChanged.connect(lambda _t: self.changed.emit())
        self.url_edit.textChanged.connect(lambda _t: self.changed.emit())
        self.fetch_button.clicked.connect(lambda: self.tasks.spawn(self.fetch_models(), name="fetch-models"))
        self.test_button.clicked.connect(lambda: self.tasks.spawn(self.test(), name="provider-test"))
        self.changed.connect(self.validate)
        self._update_key_status()
        self.validate()

    # -- validation ----------------------------------------------------------------
    def errors(self) -> list[str]:
        shown = self.profile.display_name
        problems = [check_model(self.model_box.currentText(), provider=shown),
                    check_url(self.url_edit.text(), what=f"The {shown} base URL")]
        return [p for p in problems if p]

    def validate(self) -> list[str]:
        shown = self.profile.display_name
        mark(self.model_box, check_model(self.model_box.currentText(), provider=shown))
        mark(self.url_edit, check_url(self.url_edit.text(), what=f"The {shown} base URL"))
        return self.errors()

    # -- the key ---------------------------------------------------------------------
    def _has_saved_key(self) -> bool:
        return bool(self.secrets.get(secret_ref(self.name))) and not self._forget

    def _update_key_status(self) -> None:
        if self.key_edit is None:
            return
        parts = []
        if self._has_saved_key():
            where = "in the keychain" if self.secrets.secure else "for this run only"
            parts.append(f"A key is saved {where}; type a new one to replace it.")
            self.key_edit.setPlaceholderText("•••••••• (saved)")
        else:
            parts.append("No key saved.")
            self.key_edit.setPlaceholderText("paste the API key")
        env = next((e for e in self.profile.api_key_envs if os.environ.get(e, "").strip()), "")
        if env:  # the same order as factory.resolve_api_key: the first one set wins
            parts.append(f"{env} is set in the environment and is used instead.")
        self.key_status.setText(" ".join(parts))
        self.forget_button.setEnabled(self._has_saved_key())

    def _forget_key(self) -> None:
        self._forget = True
        if self.key_edit is not None:
            self.key_edit.clear()
        self._update_key_status()
        self.changed.emit()

    def typed_key(self) -> str:
        return self.key_edit.text().strip() if self.key_edit is not None else ""

    # -- save --------------------------------------------------------------------------
    def save(self, settings: Settings) -> None:
        entry = settings.provider_entry(self.name)
        entry = replace(entry, model=self.model_box.currentText().strip(), base_url=self.url_edit.text().strip(),
                        num_ctx=self.num_ctx.value() if self.num_ctx is not None else entry.num_ctx,
                        images=self.images_box.currentData() or None,
                        api=(self.api_box.currentData() or None) if self.api_box is not None else entry.api)
        settings.set_provider_entry(self.name, entry)  # checked: a bad value is one sentence, nothing set
        if self._forget:
            self.secrets.delete(secret_ref(self.name))
            self._forget = False
        key = self.typed_key()
        if key:
            self.secrets.set(secret_ref(self.name), key)
            if self.key_edit is not None:
                self.key_edit.clear()
        self._update_key_status()

    # -- talking to the provider --------------------------------------------------------
    async def _provider(self) -> "Provider":
        from cks_desktop.llm import factory

        def make() -> "Provider":
            return factory.create_provider(self.name, None, None if self._forget else self.secrets,
                                           model=self.model_box.currentText().strip() or None,
                                           base_url=self.url_edit.text().strip() or None,
                                           api_key=self.typed_key() or None, max_retries=0,
                                           timeout=TEST_TIMEOUT, options=self._api_option())

        return await asyncio.to_thread(make)  # the first use imports the vendor SDK

    def _api_option(self) -> dict[str, Any] | None:
        """The API chosen on the page (not yet saved), for Test and Fetch models."""
        chosen = self.api_box.currentData() if self.api_box is not None else None
        return {"api": chosen} if chosen else None

    async def fetch_models(self) -> list[str]:
        from cks_desktop.llm.provider import ProviderError

        self.fetch_button.setEnabled(False)
        self.test_result.setText("Asking for the list of models…")
        provider = None
        try:
            provider = await self._provider()
            models = await asyncio.wait_for(provider.list_models(), TEST_TIMEOUT)
        except ProviderError as exc:
            self.test_result.setText(exc.local_message)  # worded for this page: names the field to fix
            return []
        except TimeoutError:
            self.test_result.setText("The provider did not answer in time.")
            return []
        finally:
            self.fetch_button.setEnabled(True)
            if provider is not None:
                await provider.aclose()
        current = self.model_box.currentText()
        self.model_box.clear()
        self.model_box.addItems(models)
        self.model_box.setEditText(current)
        self.test_result.setText(f"{counted(len(models), 'model')} available." if models
                                 else "The provider listed no models.")
        return models

    async def test(self) -> bool:
        """One tiny request with the form's values; the verdict in plain words."""
        from cks_desktop.llm.events import Finish, TextDelta
        from cks_desktop.llm.messages import Message
        from cks_desktop.llm.provider import ProviderError

        self.test_button.setEnabled(False)
        self.test_result.setText("Testing…")
        provider = None
        text = ""
        try:
            provider = await self._provider()

            async def ask() -> None:
                nonlocal text
                assert provider is not None
                async for event in provider.stream([Message.user(TEST_PROMPT)], []):
                    if isinstance(event, TextDelta):
                        text += event.text
                    elif isinstance(event, Finish):
                        break

            await asyncio.wait_for(ask(), TEST_TIMEOUT)
        except ProviderError as exc:
            self.test_result.setText(f"Not working: {exc.local_message}")  # names the field, not this page
            return False
        except TimeoutError:
            self.test_result.setText(f"Not working: no answer within {TEST_TIMEOUT:.0f} seconds.")
            return False
        finally:
            self.test_button.setEnabled(True)
            if provider is not None:
                await provider.aclose()
        reply = " ".join(text.split())[:60]
        model = self.model_box.currentText().strip()
        self.test_result.setText(f"It works: {model} answered “{reply}”." if reply
                                 else f"It works: {model} answered (with no text).")
        return True


class ProvidersPage(QWidget):
    changed = Signal()

    def __init__(self, settings: Settings, secrets: "SecretStore", tasks: TaskTracker) -> None:
        super().__init__()
        self.setObjectName("providersPage")
        layout = QVBoxLayout(self)
        if secrets.notice:
            notice = note_label(secrets.notice)
            notice.setObjectName("noKeychainNotice")
            theme.set_role(notice, "notice")
            layout.addWidget(notice)
        top = QGroupBox("The chat uses")
        top_form = QFormLayout(top)
        self.default_box = QComboBox()
        self.default_box.setObjectName("defaultProvider")
        self.default_box.addItem("(none yet)", "")
        for name in PROVIDER_NAMES:
            self.default_box.addItem(profile_for(name).display_name, name)
        self.default_box.setCurrentIndex(max(0, self.default_box.findData(settings.default_provider)))
        top_form.addRow("Provider:", self.default_box)
        layout.addWidget(top)

        self.tabs = QTabWidget()
        self.forms: dict[str, ProviderForm] = {}
        for name in PROVIDER_NAMES:
            form = ProviderForm(name, settings, secrets, tasks)
            form.changed.connect(self.changed)
            self.forms[name] = form
            self.tabs.addTab(form, form.profile.display_name)
        layout.addWidget(self.tabs, 1)
        self.default_box.currentIndexChanged.connect(self._default_changed)
        self._default_changed()

    def _default_changed(self, _index: Any = None) -> None:
        name = self.default_box.currentData()
        if name in self.forms:
            self.tabs.setCurrentWidget(self.forms[name])
        self.changed.emit()

    def errors(self) -> list[str]:
        # Only the provider the chat uses must be complete; others may stay half filled.
        name = self.default_box.currentData()
        problems = []
        for form_name, form in self.forms.items():
            errors = form.validate()
            if form_name == name or any("URL" in e for e in errors):
                problems += errors
        return problems

    def save(self, settings: Settings) -> None:
        for form in self.forms.values():
            form.save(settings)
        settings.default_provider = self.default_box.currentData() or ""
