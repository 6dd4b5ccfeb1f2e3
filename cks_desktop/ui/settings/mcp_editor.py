"""Add or edit one MCP server: transport, command or URL, env/headers with
secrets, scopes, approval, timeout, and which tools are enabled.

Every field is checked as you type, but a field's problem shows only once that
field was edited (or Save / Test connection was pressed): a form just opened
is not covered in red for fields nobody has typed in yet. An existing entry's
problems show at once (they are already in the file). Save stays off while a
shown problem remains.
"Test connection" starts the server with the form's values (saved or not),
lists its tools with a checkbox each (enabled tools) and their annotations,
then stops it.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog,
                               QFormLayout, QGridLayout, QGroupBox, QHBoxLayout, QLineEdit, QPlainTextEdit,
                               QPushButton, QScrollArea, QSizePolicy,
                               QStackedWidget, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from cks_desktop.mcp.config import OPTIONS, ConfigError, OptionPlace, Transport, rename_secrets
from cks_desktop.tools.scopes import server_identity
from cks_desktop.tools.types import Scope
from cks_desktop.ui.settings.mcp_form import AuthKind, ServerForm
from cks_desktop.ui.settings.mcp_option_fields import add_option_row, on_option_changed, option_field, option_value
from cks_desktop.ui.settings.pairs_table import PairsTable
from cks_desktop.ui.settings.widgets import error_label, mark, note_label
from cks_desktop.ui.text import SCOPE_WORDS, plain_tooltip
from cks_desktop.ui.tasks import TaskTracker
from cks_desktop.plural import counted

if TYPE_CHECKING:
    from cks_desktop.runtime import AppServices


AUTH_WORDS: tuple[tuple[str, AuthKind], ...] = (("none (the server asks for no sign-in)", "none"),
                                               ("bearer token", "bearer"), ("OAuth", "oauth"))

OAUTH_GRANT_WORDS = (("in the browser (you sign in)", "authorization_code", ""),
                     ("client credentials: client secret (HTTP Basic)", "client_credentials", "client_secret_basic"),
                     ("client credentials: client secret (in the request)", "client_credentials",
                      "client_secret_post"),
                     ("client credentials: private key (signed JWT)", "client_credentials", "private_key_jwt"),
                     ("your company's identity provider (ID-JAG)", "identity_assertion", "client_secret_basic"))

HINTS = (("read_only_hint", "read-only"), ("destructive_hint", "destructive"), ("idempotent_hint", "idempotent"),
         ("open_world_hint", "open world"))


def tool_hints(tool: Any) -> str:
    """The annotations a server gave a tool, in words ("read-only, idempotent")."""
    annotations = getattr(tool, "annotations", None)
    if annotations is None:
        return ""
    return ", ".join(word for attr, word in HINTS if getattr(annotations, attr, None))


class McpServerEditor(QDialog):
    saved = Signal(str)  # the server's name

    def __init__(self, services: "AppServices", tasks: TaskTracker, form: ServerForm | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.services = services
        self.tasks = tasks
        self.form = form or ServerForm()
        self.setObjectName("mcpServerEditor")
        self.setWindowTitle("Edit MCP server" if self.form.original_name else "Add MCP server")
        self.resize(640, 720)
        outer = QVBoxLayout(self)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        body = QWidget()
        scroll.setWidget(body)
        outer.addWidget(scroll, 1)
        layout = QVBoxLayout(body)

        top = QFormLayout()
        self.name_edit = QLineEdit(self.form.name)
        self.name_edit.setObjectName("mcpName")
        self.name_edit.setPlaceholderText("e.g. github")
        top.addRow("Name:", self.name_edit)
        self.transport_box = QComboBox()
        self.transport_box.setObjectName("mcpTransport")
        for transport in Transport:
            self.transport_box.addItem(transport.label, transport.value)
        self.transport_box.setCurrentIndex(list(Transport).index(self.form.transport))
        top.addRow("Runs as:", self.transport_box)
        layout.addLayout(top)

        self.stack = QStackedWidget()
        stdio = QWidget()
        stdio_form = QFormLayout(stdio)
        stdio_form.setContentsMargins(0, 0, 0, 0)
        self.command_edit = QLineEdit(self.form.command)
        self.command_edit.setObjectName("mcpCommand")
        self.command_edit.setPlaceholderText("npx, uvx, python, /path/to/server …")
        stdio_form.addRow("Command:", self.command_edit)
        self.args_edit = QLineEdit(self.form.args_text)
        self.args_edit.setObjectName("mcpArgs")
        self.args_edit.setPlaceholderText('-y @modelcontextprotocol/server-memory   (quote "with spaces")')
        stdio_form.addRow("Arguments:", self.args_edit)
        self.env_table = PairsTable("variable", "mcpEnv")
        self.env_table.set_pairs(self.form.env)
        stdio_form.addRow("Environment:", self.env_table)
        # the declared options (mcp/config.py OPTIONS), each where its declaration places it
        self.option_fields: dict[str, QWidget] = {}
        self._option_rows(stdio_form, "start", Transport.STDIO)
        http = QWidget()
        http_form = QFormLayout(http)
        http_form.setContentsMargins(0, 0, 0, 0)
        self.url_edit = QLineEdit(self.form.url)
        self.url_edit.setObjectName("mcpUrl")
        self.url_edit.setPlaceholderText("https://example.com/mcp")
        http_form.addRow("URL:", self.url_edit)
        self.headers_table = PairsTable("header", "mcpHeaders")
        self.headers_table.set_pairs(self.form.headers)
        http_form.addRow("Headers:", self.headers_table)
        self.auth_box = QComboBox()
        self.auth_box.setObjectName("mcpAuth")
        for words, kind in AUTH_WORDS:
            self.auth_box.addItem(words, kind)
        self.auth_box.setCurrentIndex(max(0, self.auth_box.findData(self.form.auth)))
        self.auth_box.setToolTip(plain_tooltip(
            "How the app signs in to this server: not at all, with a token the server's owner gave you "
            "(sent as “Authorization: Bearer …”), or with OAuth when the server asks."))
        http_form.addRow("Sign-in:", self.auth_box)
        self.bearer_edit = QLineEdit(self.form.bearer_token)
        self.bearer_edit.setObjectName("mcpBearerToken")
        self.bearer_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.bearer_edit.setPlaceholderText("kept in the keychain" if self.form.bearer_ref
                                            else "paste the token (kept in the keychain)")
        http_form.addRow("Bearer token:", self.bearer_edit)
        self._http_form = http_form
        # OAuth: only for a client registered by hand; otherwise "Sign in" registers one itself.
        self.oauth_grant_box = QComboBox()
        self.oauth_grant_box.setObjectName("mcpOAuthGrant")
        for words, grant, auth in OAUTH_GRANT_WORDS:
            self.oauth_grant_box.addItem(words, f"{grant}:{auth}")
        if self.form.oauth_grant == "identity_assertion" and self.form.oauth_auth == "client_secret_post":
            self.oauth_grant_box.addItem("your company's identity provider (ID-JAG, secret in the request)",
                                         "identity_assertion:client_secret_post")  # set in settings.json; kept
        chosen = f"{self.form.oauth_grant}:{self.form.oauth_auth or 'client_secret_basic'}" \
            if self.form.oauth_grant != "authorization_code" else "authorization_code:"
        self.oauth_grant_box.setCurrentIndex(max(0, self.oauth_grant_box.findData(chosen)))
        self.oauth_grant_box.setToolTip("How the app signs in when the server asks for OAuth: you, in the "
                                        "browser; or the app itself, as a client registered for it (client "
                                        "credentials), with its secret or its private key, and no browser; or "
                                        "your company's identity provider, with your ID token (enterprise-"
                                        "managed authorization).")
        http_form.addRow("OAuth sign-in:", self.oauth_grant_box)
        self.oauth_key_button = QPushButton("Load private key…")
        self.oauth_key_button.setObjectName("mcpOAuthPrivateKey")
        self.oauth_key_button.setToolTip("A PEM file (RSA, EC or Ed25519); its key is kept in the keychain, "
                                         "the file is not referenced.")
        self.oauth_key_button.clicked.connect(self._load_private_key)
        self.oauth_key_note = note_label("kept in the keychain" if self.form.oauth_key_ref else "none loaded")
        key_row = QHBoxLayout()
        key_row.addWidget(self.oauth_key_button)
        key_row.addWidget(self.oauth_key_note, 1)
        http_form.addRow("OAuth private key:", key_row)
        self._oauth_key_row = key_row
        self.oauth_client_edit = QLineEdit(self.form.oauth_client_id)
        self.oauth_client_edit.setObjectName("mcpOAuthClientId")
        self.oauth_client_edit.setPlaceholderText("only for a client registered by hand (optional)")
        http_form.addRow("OAuth client ID:", self.oauth_client_edit)
        self.oauth_secret_edit = QLineEdit()
        self.oauth_secret_edit.setObjectName("mcpOAuthClientSecret")
        self.oauth_secret_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.oauth_secret_edit.setPlaceholderText("kept in the keychain" if self.form.oauth_secret_ref
                                                  else "none (kept in the keychain when typed)")
        http_form.addRow("OAuth client secret:", self.oauth_secret_edit)
        self.oauth_scope_edit = QLineEdit(self.form.oauth_scope)
        self.oauth_scope_edit.setObjectName("mcpOAuthScope")
        self.oauth_scope_edit.setPlaceholderText("the server's own choice")
        http_form.addRow("OAuth scope:", self.oauth_scope_edit)
        self.oauth_cimd_edit = QLineEdit(self.form.oauth_client_metadata_url)
        self.oauth_cimd_edit.setObjectName("mcpOAuthClientMetadataUrl")
        self.oauth_cimd_edit.setPlaceholderText("https://… client ID metadata document (optional)")
        http_form.addRow("OAuth client metadata URL:", self.oauth_cimd_edit)
        self.oauth_port_edit = QLineEdit(self.form.oauth_callback_port)
        self.oauth_port_edit.setObjectName("mcpOAuthCallbackPort")
        self.oauth_port_edit.setPlaceholderText("any free port (a client registered by hand may need its own)")
        http_form.addRow("OAuth callback port:", self.oauth_port_edit)
        self._identity_provider_rows(http_form)
        self._option_rows(http_form, "start", Transport.HTTP)
        self.stack.addWidget(stdio)
        self.stack.addWidget(http)
        layout.addWidget(self.stack)
        self._label_forms = (top, stdio_form, http_form)
        self.stack.currentChanged.connect(lambda _index: self._align_labels())
        self._align_labels()

        rules = QGroupBox("Permissions")
        rules_form = QFormLayout(rules)
        scopes = QGridLayout()
        self.scope_boxes: dict[str, QCheckBox] = {}
        for i, scope in enumerate(Scope):
            box = QCheckBox(scope.value)
            box.setToolTip(plain_tooltip(SCOPE_WORDS.get(scope.value, "")))
            box.setChecked(scope.value in self.form.scopes)
            self.scope_boxes[scope.value] = box
            scopes.addWidget(box, i // 3, i % 3)
        rules_form.addRow("Scopes a chat must grant:", scopes)
        # code.execute / net.fetch are off in chats until the person turns them on, for a
        # session (its Scopes…) or here for this one server. Stored in the app's own section with the
        # server's fingerprint, so an imported or re-added server of the same name gets no grant.
        self.grant_box = QCheckBox("Grant these scopes to this server's tools in every chat")
        self.grant_box.setObjectName("mcpGrantEveryChat")
        self.grant_box.setToolTip(plain_tooltip(
            "Off: this server's tools reach a chat only if the chat's session grants the scopes above "
            "(right-click the session → Scopes…)."))
        granted, identity = services.settings.server_grant(self.form.original_name) if self.form.original_name \
            else ([], "")
        current = services.settings.mcp_servers.get(self.form.original_name) if self.form.original_name else None
        # A server the person adds here is one they chose to use: granted unless they untick it.
        self.grant_box.setChecked(not self.form.original_name or (
            bool(granted) and identity == server_identity(current) and set(granted) >= set(self.form.scopes)))
        rules_form.addRow("", self.grant_box)
        self.approval_box = QComboBox()
        self.approval_box.setObjectName("mcpApproval")
        for value, words in (("always", "ask for every call"), ("once", "ask once per reply"),
                             ("auto", "never ask")):
            self.approval_box.addItem(f"{value} — {words}", value)
        self.approval_box.setCurrentIndex(max(0, self.approval_box.findData(self.form.approval)))
        rules_form.addRow("Approval:", self.approval_box)
        self._option_rows(rules_form, "rules")
        self.enabled_box = QCheckBox("Start this server with the app")
        self.enabled_box.setChecked(self.form.enabled)
        rules_form.addRow(self.enabled_box)
        layout.addWidget(rules)
        layout.addWidget(self._requests_group())

        tools = QGroupBox("Tools")
        tools_layout = QVBoxLayout(tools)
        test_row = QHBoxLayout()
        self.test_button = QPushButton("Test connection")
        self.test_button.setObjectName("mcpTestConnection")
        self.test_button.setAutoDefault(False)
        self.test_result = note_label("Test the connection to see the server's tools and choose which to offer.")
        self.test_result.setObjectName("mcpTestResult")
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.test_result, 1)
        tools_layout.addLayout(test_row)
        self.tools_tree = QTreeWidget()
        self.tools_tree.setObjectName("mcpTools")
        self.tools_tree.setHeaderLabels(["Tool", "Hints", "Description"])
        self.tools_tree.setRootIsDecorated(False)
        self.tools_tree.setMinimumHeight(140)
        tools_layout.addWidget(self.tools_tree)
        if self.form.enabled_tools is not None:
            for name in self.form.enabled_tools:
                self._add_tool_item(name, "", "", True)
        layout.addWidget(tools)

        self.errors_label = error_label()
        outer.addWidget(self.errors_label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setObjectName("mcpSave")
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        outer.addWidget(buttons)

        # Which fields the person has edited: only their problems (and the entry's) are shown.
        self._touched: set[str] = set()
        self._show_all = bool(self.form.original_name)
        for key, edit in (("name", self.name_edit), ("command", self.command_edit), ("args", self.args_edit),
                          ("url", self.url_edit)):
            edit.textChanged.connect(lambda _t, key=key: self._touch(key))
        for option in OPTIONS:
            if option.key in self.option_fields:
                on_option_changed(option, self.option_fields[option.key], partial(self._touch, option.key))
        self.transport_box.currentIndexChanged.connect(self._transport_changed)
        self.env_table.changed.connect(lambda: self._touch("env"))
        self.headers_table.changed.connect(lambda: self._touch("headers"))
        self.auth_box.currentIndexChanged.connect(lambda *_: self._touch("auth"))
        self.auth_box.currentIndexChanged.connect(self._oauth_fields)
        self.bearer_edit.textChanged.connect(lambda _t: self._touch("auth"))
        self.oauth_grant_box.currentIndexChanged.connect(lambda *_: self._touch("oauth"))
        self.oauth_grant_box.currentIndexChanged.connect(self._oauth_fields)
        self._oauth_fields()
        for edit in (self.oauth_client_edit, self.oauth_secret_edit, self.oauth_scope_edit, self.oauth_cimd_edit,
                     self.oauth_port_edit):
            edit.textChanged.connect(lambda _t: self._touch("oauth"))
        for box in self.scope_boxes.values():
            box.toggled.connect(self.validate)
        self.tools_tree.itemChanged.connect(lambda *_: self.validate())
        self.test_button.clicked.connect(lambda: self.tasks.spawn(self.test_connection(), name="mcp-probe"))
        self._transport_changed(initial=True)

    def _option_rows(self, form: QFormLayout, place: OptionPlace, transport: Transport | None = None) -> None:
        """A row for each declared option shown at ``place`` (on a transport's page: the options of
        that transport only), showing the form's value."""
        for option in OPTIONS:
            if option.place != place or (transport is not None and not option.applies_to(transport)):
                continue
            field = option_field(option, self.form.options.get(option.key, option.default))
            self.option_fields[option.key] = field
            add_option_row(form, option, field)

    def _requests_group(self) -> QGroupBox:
        """What the server may ask of the app: its log level, sampling, and extra root folders
        (the ``logLevel`` / ``sampling`` / ``roots`` keys of mcp/config.py)."""
        group = QGroupBox("What the server may ask")
        form = QFormLayout(group)
        self._option_rows(form, "requests")
        self.roots_edit = QPlainTextEdit("\n".join(self.form.roots))
        self.roots_edit.setObjectName("mcpRoots")
        self.roots_edit.setPlaceholderText("one folder per line (besides the folders you allowed)")
        self.roots_edit.setFixedHeight(72)
        add_root = QPushButton("Add folder…")
        add_root.setObjectName("mcpAddRoot")
        add_root.setAutoDefault(False)
        add_root.clicked.connect(self.pick_root)
        roots_row = QHBoxLayout()
        roots_row.addWidget(self.roots_edit, 1)
        roots_row.addWidget(add_root, 0, Qt.AlignmentFlag.AlignTop)
        form.addRow("Extra roots:", roots_row)
        return group

    def pick_root(self) -> None:
        """A folder chooser opened with open() (never exec()): the chosen folder is appended."""
        dialog = QFileDialog(self, "Extra root folder")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(self.add_root)
        self.root_dialog = dialog
        dialog.open()

    def add_root(self, folder: str) -> None:
        roots = self.roots()
        if folder and folder not in roots:
            self.roots_edit.setPlainText("\n".join([*roots, folder]))

    def roots(self) -> list[str]:
        return [line.strip() for line in self.roots_edit.toPlainText().splitlines() if line.strip()]

    # -- form ⇄ widgets ---------------------------------------------------------------
    def _transport(self) -> Transport:
        return Transport(self.transport_box.currentData())

    def _transport_changed(self, *_args: Any, initial: bool = False) -> None:
        transport = self._transport()
        self.stack.setCurrentIndex(list(Transport).index(transport))
        # the stack is as tall as the page shown, not as its tallest page (a command's short form
        # stretched its environment table to the URL page's height)
        for index in range(self.stack.count()):
            shown = index == self.stack.currentIndex()
            policy = QSizePolicy.Policy.Preferred if shown else QSizePolicy.Policy.Ignored
            page = self.stack.widget(index)
            if page is not None:
                page.setSizePolicy(policy, policy)
        self.stack.adjustSize()
        if not initial and not self.form.original_name:
            # A new server's default scopes follow its kind: a command runs code, a URL uses the network.
            default = next(iter(transport.default_scopes)).value
            for value, box in self.scope_boxes.items():
                box.setChecked(value == default)
        self.validate()

    def collect(self) -> ServerForm:
        form = self.form
        form.name = self.name_edit.text()
        form.transport = self._transport()
        form.command = self.command_edit.text()
        form.args_text = self.args_edit.text()
        form.url = self.url_edit.text()
        form.env = self.env_table.pairs()
        form.headers = self.headers_table.pairs()
        form.auth = self.auth_box.currentData() or "oauth"
        form.bearer_token = self.bearer_edit.text()
        form.oauth_client_id = self.oauth_client_edit.text()
        form.oauth_client_secret = self.oauth_secret_edit.text()
        form.oauth_scope = self.oauth_scope_edit.text()
        form.oauth_client_metadata_url = self.oauth_cimd_edit.text()
        form.oauth_callback_port = self.oauth_port_edit.text()
        form.oauth_issuer = self.oauth_issuer_edit.text()
        form.oauth_idp_endpoint = self.oauth_idp_endpoint_edit.text()
        form.oauth_idp_client_id = self.oauth_idp_client_edit.text()
        form.oauth_idp_secret = self.oauth_idp_secret_edit.text()
        form.oauth_id_token = self.oauth_id_token_edit.text()
        form.oauth_grant, _, form.oauth_auth = str(self.oauth_grant_box.currentData() or "authorization_code:") \
            .partition(":")
        form.scopes = {v for v, box in self.scope_boxes.items() if box.isChecked()}
        form.approval = self.approval_box.currentData()
        form.enabled = self.enabled_box.isChecked()
        form.enabled_tools = self._enabled_tools()
        form.options = {**form.options, **{o.key: option_value(o, self.option_fields[o.key])
                                           for o in OPTIONS if o.key in self.option_fields}}
        form.roots = self.roots()
        return form

    def _align_labels(self) -> None:
        """Name and Runs as sit in their own form above the transport's (a stacked page), so each
        form had its own label column and their fields did not line up. Both get the same label
        alignment and the label width of the widest label of the top form and the page shown
        (hidden OAuth rows included, so the column stays put when they show)."""
        top, *pages = self._label_forms
        forms = (top, pages[self.stack.currentIndex()])
        labels: list[QWidget] = []
        for form in forms:
            for row in range(form.rowCount()):
                item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
                label = item.widget() if item is not None else None
                if label is not None:
                    labels.append(label)
        for form in self._label_forms:
            form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        width = max((label.sizeHint().width() for label in labels), default=0)
        for label in labels:
            label.setMinimumWidth(width)

    def _identity_provider_rows(self, http_form: QFormLayout) -> None:
        """The fields of an enterprise-managed server (SEP-990): the MCP server's authorization server,
        and the identity provider that exchanges the person's ID token; secrets go to the keychain."""
        form = self.form

        def line(text: str, name: str, placeholder: str, tip: str, *, secret_ref: str | None = None,
                 secret: bool = False) -> QLineEdit:
            edit = QLineEdit(text)
            edit.setObjectName(name)
            if secret:
                edit.setEchoMode(QLineEdit.EchoMode.Password)
                placeholder = "kept in the keychain" if secret_ref else placeholder
            edit.setPlaceholderText(placeholder)
            edit.setToolTip(plain_tooltip(tip))
            return edit

        self.oauth_issuer_edit = line(form.oauth_issuer, "mcpOAuthIssuer", "https://auth.example.com",
                                      "The issuer URL of the MCP server's authorization server: credentials "
                                      "are sent only there (optional for client credentials).")
        http_form.addRow("OAuth issuer:", self.oauth_issuer_edit)
        self.oauth_idp_endpoint_edit = line(form.oauth_idp_endpoint, "mcpOAuthIdpEndpoint",
                                            "https://login.example.com/oauth2/token",
                                            "Your identity provider's token endpoint, which turns your ID token "
                                            "into an ID-JAG for this server.")
        http_form.addRow("Identity provider token endpoint:", self.oauth_idp_endpoint_edit)
        self.oauth_idp_client_edit = line(form.oauth_idp_client_id, "mcpOAuthIdpClientId",
                                          "this app's client ID there",
                                          "The client ID this app is registered with at your identity provider.")
        http_form.addRow("Identity provider client ID:", self.oauth_idp_client_edit)
        self.oauth_idp_secret_edit = line("", "mcpOAuthIdpClientSecret", "none (kept in the keychain when typed)",
                                          "The identity provider's client secret for this app, if it has one.",
                                          secret_ref=form.oauth_idp_secret_ref, secret=True)
        http_form.addRow("Identity provider client secret:", self.oauth_idp_secret_edit)
        self.oauth_id_token_edit = line("", "mcpOAuthIdToken", "paste it here (kept in the keychain)",
                                        "The ID token your identity provider gave you at your company sign-in. "
                                        "ID tokens expire: paste a new one here when the server says so.",
                                        secret_ref=form.oauth_id_token_ref, secret=True)
        http_form.addRow("ID token:", self.oauth_id_token_edit)
        for edit in (self.oauth_issuer_edit, self.oauth_idp_endpoint_edit, self.oauth_idp_client_edit,
                     self.oauth_idp_secret_edit, self.oauth_id_token_edit):
            edit.textChanged.connect(lambda _t: self._touch("oauth"))

    def _oauth_fields(self, *_args: Any) -> None:
        """Only the fields the chosen sign-in uses show: the token for a bearer token; for OAuth, a
        private key for a signed JWT, a secret otherwise (a browser sign-in with a client registered
        by hand may have one), the issuer for a sign-in without a browser, the identity provider's
        fields for an ID-JAG."""
        kind = self.auth_box.currentData()
        grant, _, auth = str(self.oauth_grant_box.currentData() or "authorization_code:").partition(":")
        jwt = auth == "private_key_jwt"
        shown: list[tuple[QWidget | QHBoxLayout, bool]] = [
            (self.bearer_edit, kind == "bearer"), (self.oauth_grant_box, True), (self.oauth_client_edit, True),
            (self.oauth_scope_edit, True), (self._oauth_key_row, jwt), (self.oauth_secret_edit, not jwt),
            (self.oauth_issuer_edit, grant != "authorization_code"),
            (self.oauth_cimd_edit, grant == "authorization_code"), (self.oauth_port_edit, grant == "authorization_code")]
        shown += [(edit, grant == "identity_assertion") for edit in (
            self.oauth_idp_endpoint_edit, self.oauth_idp_client_edit, self.oauth_idp_secret_edit,
            self.oauth_id_token_edit)]
        for row, wanted in shown:
            visible = wanted if row is self.bearer_edit else kind == "oauth" and wanted
            self._http_form.setRowVisible(row, visible)
            if isinstance(row, QWidget):
                row.setEnabled(wanted)
        self.oauth_key_button.setEnabled(jwt)

    def _load_private_key(self) -> None:
        """Read a PEM file into the form (stored in the keychain on Save; the path is not kept)."""
        path, _ = QFileDialog.getOpenFileName(self, "OAuth private key", "", "PEM files (*.pem *.key);;All files (*)")
        if not path:
            return
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read(64 * 1024 + 1)
        except (OSError, UnicodeDecodeError) as exc:
            self.oauth_key_note.setText(f"could not be read: {getattr(exc, 'strerror', None) or exc}")
            return
        self.form.oauth_private_key = text
        self.oauth_key_note.setText("loaded; kept in the keychain when saved")
        self._touch("oauth")

    def _enabled_tools(self) -> list[str] | None:
        count = self.tools_tree.topLevelItemCount()
        if count == 0:
            return self.form.enabled_tools
        items = [item for i in range(count) if (item := self.tools_tree.topLevelItem(i)) is not None]
        checked = [item.text(0) for item in items if item.checkState(0) == Qt.CheckState.Checked]
        return None if len(checked) == count else checked

    def _touch(self, key: str) -> None:
        self._touched.add(key)
        self.validate()

    def reveal_problems(self) -> list[str]:
        """Show every problem (Save or Test pressed on an unfinished form); returns them."""
        self._show_all = True
        return self.validate()

    def shown_problems(self) -> list[tuple[str, str]]:
        """The problems on screen: those of edited fields, and the entry's own once anything was edited."""
        problems = self.collect().field_errors(self.services.settings)
        if self._show_all:
            return problems
        return [(key, text) for key, text in problems
                if key in self._touched or (not key and self._touched)]

    def validate(self, *_args: Any) -> list[str]:
        """Check the whole form; mark only the problems that should show (see ``shown_problems``)."""
        problems = self.collect().errors(self.services.settings)
        shown = self.shown_problems()
        by_field = {key: text for key, text in reversed(shown)}  # the first problem of each field
        mark(self.name_edit, by_field.get("name"))
        stdio = self._transport() is Transport.STDIO
        mark(self.command_edit, by_field.get("command") if stdio else None)
        mark(self.args_edit, by_field.get("args") if stdio else None)
        mark(self.url_edit, None if stdio else by_field.get("url"))
        mark(self.bearer_edit, None if stdio else by_field.get("auth"))
        for option in OPTIONS:
            if option.key in self.option_fields:
                problem = by_field.get(option.key) if option.applies_to(self._transport()) else None
                mark(self.option_fields[option.key], problem, hint=option.help)
        self.errors_label.setText("\n".join(text for _key, text in shown))
        self.errors_label.setVisible(bool(shown))
        self.save_button.setEnabled(not shown)
        self.test_button.setEnabled(not shown)
        return problems

    # -- test connection ----------------------------------------------------------------
    def _add_tool_item(self, name: str, hints: str, description: str, checked: bool) -> None:
        item = QTreeWidgetItem([name, hints, " ".join(description.split())[:200]])
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(0, Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        item.setToolTip(2, plain_tooltip(description))  # the server's words: never HTML
        self.tools_tree.addTopLevelItem(item)

    async def test_connection(self) -> bool:
        if self.reveal_problems():
            return False
        form = self.collect()
        try:
            config = form.probe_config()
        except ConfigError as exc:
            self.test_result.setText(str(exc))
            return False
        manager = self.services.mcp
        if manager is None:
            self.test_result.setText("MCP support is still starting; try again in a moment.")
            return False
        self.test_button.setEnabled(False)
        self.test_result.setText("Starting the server…")
        try:
            result = await manager.probe(config, keep_log=False)
        finally:
            self.test_button.setEnabled(True)
        if not result.ok:
            tail = "\n".join(result.stderr[-5:])
            self.test_result.setText(f"It did not work: {result.reason}" + (f"\n{tail}" if tail else ""))
            return False
        enabled = set(form.enabled_tools) if form.enabled_tools is not None else None
        self.tools_tree.blockSignals(True)
        self.tools_tree.clear()
        for tool in result.tools:
            self._add_tool_item(tool.name, tool_hints(tool), tool.description or "",
                                enabled is None or tool.name in enabled)
        self.tools_tree.blockSignals(False)
        for i in range(3):
            self.tools_tree.resizeColumnToContents(i)
        skipped = f"; {len(result.skipped)} skipped (invalid)" if result.skipped else ""
        server = f" ({result.server_name})" if result.server_name else ""
        self.test_result.setText(f"Connected{server}: {counted(len(result.tools), 'tool')}{skipped}. "
                                 "Untick the ones the assistant should not see.")
        self.validate()
        return True

    # -- saving ------------------------------------------------------------------------------
    def _save(self) -> None:
        if self.reveal_problems():
            return
        form = self.collect()
        settings = self.services.settings
        name = form.name.strip()
        original = form.original_name
        base = settings.mcp_servers.get(original) if original else None
        entry = form.to_entry(base if isinstance(base, dict) else None, self.services.secrets)
        if original and original != name:
            # Keychain entries are named after their server, which alone may use them: move them along.
            entry = rename_secrets(entry, original, name, self.services.secrets)
            settings.mcp_servers.pop(original, None)
            settings.set_server_grant(original, [])
        settings.mcp_servers[name] = entry
        settings.set_server_grant(name, sorted(form.scopes) if self.grant_box.isChecked() else [],
                                  server_identity(entry))
        try:
            settings.save()
        except OSError as exc:  # SettingsSaveError: one sentence; the file is unchanged, the editor stays open
            self.errors_label.setText(str(exc))
            self.errors_label.show()
            return
        self.saved.emit(name)
        self.accept()

