"""Where the person writes: the input, Send/Stop, and the provider/model picker.

Enter sends and Shift+Enter starts a new line, or the reverse (Settings →
Chat, ``ui.enter_sends``). Ctrl+Enter always sends. Esc asks to stop.

The model box is a picker: its list holds the provider's known model
(its profile's default and the one in the settings) and, after Fetch models (the provider's
``list_models``, offered when its profile says it can list), every model it named. What is
typed is checked (``model_problem``) and applied only on Enter or a choice from the list,
never on each keystroke or when the box loses focus. A well-formed name the fetched list
does not contain is applied on a second Enter, after a sentence saying so.

Images: an image pasted or dropped into the input (clipboard image data,
or a local image file) is validated (``tools/images.py``) and waits as a thumbnail chip with a
remove × above the input until Send, which sends it with the message. A URL that is not a
local file (``http://…``) is pasted as text and never fetched. When the chosen model is known
not to take images (``image_support``, set by the panel from the profile and the settings),
the image is not attached and the hint under the input says why in one sentence.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QBuffer, QByteArray, QEvent, QIODevice, QMimeData, QObject, Qt, Signal
from PySide6.QtGui import QImage, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (QComboBox, QFileDialog, QHBoxLayout, QPlainTextEdit, QPushButton, QSizePolicy,
                               QToolButton, QVBoxLayout, QWidget)

from cks_desktop.agent.events import ContextUsage
from cks_desktop.agent.images import part_of, read_image_file
from cks_desktop.tools.images import ImageBlob, ImageRefused, sniff
from cks_desktop.ui.labels import plain_label

from cks_desktop.ui import theme
from cks_desktop.ui.chat.context_meter import ContextMeter
from cks_desktop.llm.profiles import PROFILES
from cks_desktop.plural import counted
from cks_desktop.ui.text import plain_tooltip


MIN_LINES = 3
MAX_LINES = 10


log = logging.getLogger(__name__)
MAX_ATTACHED = 8  # images waiting in the composer at once


def images_in(source: QMimeData) -> tuple[list[ImageBlob], list[str]]:
    """The images a paste or drop carries (clipboard image data, local image files) and one
    sentence per thing refused. Only ``file:`` URLs are read; no other URL is ever fetched."""
    found: list[ImageBlob] = []
    problems: list[str] = []
    if source.hasUrls():
        for url in source.urls():
            if url.isLocalFile():
                try:
                    found.append(read_image_file(url.toLocalFile()))
                except ImageRefused as exc:
                    problems.append(str(exc))
    if not found and not problems and source.hasImage():
        image = source.imageData()
        if isinstance(image, QImage) and not image.isNull():
            data = QByteArray()
            buffer = QBuffer(data)
            buffer.open(QIODevice.OpenModeFlag.WriteOnly)
            image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs say bytes; PySide6 takes str
            buffer.close()
            try:
                found.append(sniff(bytes(data.data())))
            except ImageRefused as exc:
                problems.append(str(exc))
    return found, problems


def _offers_images(source: QMimeData) -> bool:
    return source.hasImage() or (source.hasUrls() and any(u.isLocalFile() for u in source.urls()))


class ChatInput(QPlainTextEdit):
    submitted = Signal()
    stopRequested = Signal()
    imagesOffered = Signal(list, list)  # ImageBlobs, sentences about what was refused

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatInput")
        self.setAccessibleName("Message to the assistant")
        self.setTabChangesFocus(True)
        self.enter_sends = True
        self._update_placeholder()
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.textChanged.connect(self._grow)
        self._grow()

    def _grow(self) -> None:
        """Three lines when empty, growing with the text up to ten, then it scrolls."""
        lines = max(MIN_LINES, min(MAX_LINES, self.document().lineCount()))
        margins = self.contentsMargins().top() + self.contentsMargins().bottom()
        height = self.fontMetrics().lineSpacing() * lines + int(2 * self.document().documentMargin()) + margins
        if height != self.height():
            self.setFixedHeight(height)

    def set_enter_sends(self, enter_sends: bool) -> None:
        self.enter_sends = enter_sends
        self._update_placeholder()

    def _update_placeholder(self) -> None:
        keys = "Enter to send, Shift+Enter for a new line" if self.enter_sends \
            else "Shift+Enter or Ctrl+Enter to send, Enter for a new line"
        self.setPlaceholderText(f"Ask about this session's graph… ({keys})")

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        key = event.key()
        if key == Qt.Key.Key_Escape:
            self.stopRequested.emit()
            event.accept()
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            mods = event.modifiers()
            ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
            shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
            if ctrl or (self.enter_sends and not shift) or (not self.enter_sends and shift):
                self.submitted.emit()
                event.accept()
                return
            if shift:  # Shift+Enter would insert a paragraph separator; make it a plain new line
                self.insertPlainText("\n")
                event.accept()
                return
        super().keyPressEvent(event)

    # -- paste and drop: images become attachments, never fetched URLs ------------------
    def canInsertFromMimeData(self, source: QMimeData) -> bool:  # noqa: N802
        return _offers_images(source) or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:  # noqa: N802
        if _offers_images(source):
            try:
                images, problems = images_in(source)
            except Exception:  # never let a failure cross into Qt's C++ (it would end the app)
                log.exception("reading a pasted or dropped image failed")
                images, problems = [], ["The pasted or dropped image could not be read."]
            if images or problems:
                self.imagesOffered.emit(images, problems)
                return
        super().insertFromMimeData(source)


class Composer(QWidget):
    sendClicked = Signal(str)
    stopClicked = Signal()
    providerChosen = Signal(str, str)  # provider, model
    fetchModelsRequested = Signal()
    attachDocumentsRequested = Signal()  # the paperclip: the window adds documents to the session

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 6)
        layout.setSpacing(4)
        self.attachments = QWidget()  # the images waiting to be sent (chips with a remove ×)
        self.attachments.setObjectName("composerAttachments")
        self._chips = QHBoxLayout(self.attachments)
        self._chips.setContentsMargins(0, 0, 0, 0)
        self._chips.setSpacing(6)
        self._chips.addStretch(1)
        self.attachments.hide()
        layout.addWidget(self.attachments)
        self.images: list[ImageBlob] = []
        # Set by the panel: a sentence when the chosen model is known not to take images, else None.
        self.image_support: Callable[[], str | None] | None = None
        self.input = ChatInput()
        self.input.imagesOffered.connect(self.offer_images)
        layout.addWidget(self.input)

        bottom = QHBoxLayout()
        self.provider_box = QComboBox()
        self.provider_box.setObjectName("providerPicker")
        self.provider_box.setAccessibleName("Model provider")
        self.provider_box.setPlaceholderText("Provider…")
        for name, profile in PROFILES.items():
            self.provider_box.addItem(profile.display_name, name)
        self.model_box = QComboBox()
        self.model_box.setObjectName("modelPicker")
        self.model_box.setAccessibleName("Model")
        self.model_box.setEditable(True)
        self.model_box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        model_edit = self.model_box.lineEdit()
        assert model_edit is not None  # an editable combo box always has one
        model_edit.setPlaceholderText("model")
        self.model_box.setMinimumContentsLength(14)
        self.model_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        # The chat dock is about 330 px wide at 1280×800: the provider keeps a readable name and
        # the model box takes the rest; Fetch models (and the MCP Attach) are icon buttons.
        self.provider_box.setMinimumContentsLength(9)
        self.provider_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.attach_documents_button = QToolButton()  # documents into the session
        self.attach_documents_button.setObjectName("attachDocumentsButton")
        self.attach_documents_button.setAccessibleName("Add documents")
        self.attach_documents_button.setToolTip("Add documents to this session (text, Markdown, HTML, PDF, Word)")
        self.attach_documents_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        theme.bind_icon(self.attach_documents_button, "file-plus")  # the paperclip is the MCP Attach
        self.attach_documents_button.setAutoRaise(True)
        self.attach_documents_button.clicked.connect(self.attachDocumentsRequested)
        bottom.addWidget(self.attach_documents_button)
        self.attach_image_button = QToolButton()  # images into the message (paste and drop too)
        self.attach_image_button.setObjectName("attachImageButton")
        self.attach_image_button.setAccessibleName("Attach images")
        self.attach_image_button.setToolTip("Attach images to the message (PNG, JPEG, GIF, WebP); "
                                            "pasting or dropping one into the input works too")
        self.attach_image_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        theme.bind_icon(self.attach_image_button, "image")
        self.attach_image_button.setAutoRaise(True)
        self.attach_image_button.clicked.connect(self.pick_images)
        self.image_dialog: QFileDialog | None = None  # the last file dialog Images… opened (tests)
        bottom.addWidget(self.attach_image_button)
        # The provider, the model and Fetch models: in the button row when the chat is wide enough,
        # on a line of their own above it when not (``_place_pickers``): at the chat's usual 300-330 px
        # the one row (three attach buttons, the meter, Send) squeezed both boxes to empty slivers.
        self.pickers = QWidget()
        self.pickers.setObjectName("composerPickers")
        pickers_row = QHBoxLayout(self.pickers)
        pickers_row.setContentsMargins(0, 0, 0, 0)
        pickers_row.addWidget(self.provider_box)
        pickers_row.addWidget(self.model_box, 1)
        bottom.addWidget(self.pickers, 1)
        self.fetch_button = QToolButton()
        self.fetch_button.setObjectName("fetchModelsButton")
        self.fetch_button.setText("Fetch models")
        self.fetch_button.setAccessibleName("Fetch models")
        self.fetch_button.setToolTip("Fetch models: ask the provider which models it has, and list them here")
        self.fetch_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        theme.bind_icon(self.fetch_button, "arrows-clockwise")
        self.fetch_button.setAutoRaise(True)
        self.fetch_button.clicked.connect(self.fetchModelsRequested)
        pickers_row.addWidget(self.fetch_button)
        self.context_meter = ContextMeter()  # how full the context is; hidden until known
        bottom.addWidget(self.context_meter)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("sendButton")
        self.send_button.setAutoDefault(False)
        self.send_button.setToolTip("Send (Enter or Ctrl+Enter)")
        theme.set_role(self.send_button, "primary")  # the accent button (ui/theme)
        bottom.addWidget(self.send_button)
        self._picker_line = QHBoxLayout()  # where the pickers go in a narrow chat
        self._picker_line.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._picker_line)
        layout.addLayout(bottom)
        self._bottom = bottom
        self._pickers_apart = False
        self.model_hint = plain_label("", name="modelHint", wrap=True)
        self.model_hint.hide()
        layout.addWidget(self.model_hint)

        self._running = False
        # MCP hooks (ui/chat/slash_commands.py): a submit hook that returns True takes the text
        # (a slash command opens its form); decorators add to the message (attached resources).
        self.submit_hooks: list[Callable[[str], bool]] = []
        self.message_decorators: list[Callable[[str], str]] = []
        self._fetched: list[str] = []  # what Fetch models returned for the shown provider
        self._confirm: str | None = None  # a typed name outside the fetched list, Enter once already
        self._syncing = False
        self._shown: tuple[str, str] = ("", "")
        self.send_button.clicked.connect(self._button_clicked)
        self.input.submitted.connect(self.submit)
        self.input.stopRequested.connect(self.stopClicked)
        self.provider_box.activated.connect(self._provider_activated)
        model_edit.installEventFilter(self)  # Enter applies (eventFilter); focus-out does not
        self.model_box.activated.connect(lambda _i: self._model_edited(chosen=True))
        self.set_running(False)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._place_pickers()

    def _place_pickers(self) -> None:
        """The pickers in the button row if all of it fits at its minimum width, else above it."""
        spacing = max(0, self._bottom.spacing())
        outer = self.layout()
        margins = outer.contentsMargins() if outer is not None else None
        room = self.width() - (margins.left() + margins.right() if margins is not None else 0)
        buttons = 0
        for i in range(self._bottom.count()):
            item = self._bottom.itemAt(i)
            widget = item.widget() if item is not None else None
            if widget is not None and widget is not self.pickers and not widget.isHidden():
                buttons += widget.minimumSizeHint().width() + spacing
        apart = buttons + self.pickers.minimumSizeHint().width() > room
        if apart == self._pickers_apart:
            return
        self._pickers_apart = apart
        if apart:
            self._bottom.removeWidget(self.pickers)
            self._bottom.insertStretch(2, 1)  # after the attach buttons: the meter and Send stay right
            self._picker_line.addWidget(self.pickers)
        else:
            self._picker_line.removeWidget(self.pickers)
            stretch = self._bottom.takeAt(2)
            del stretch
            self._bottom.insertWidget(2, self.pickers, 1)
        # Tab follows what the eye reads: the pickers' line first when it sits above the buttons
        pickers: list[QWidget] = [self.provider_box, self.model_box, self.fetch_button]
        attach: list[QWidget] = [self.attach_documents_button, self.attach_image_button]
        order = [self.input, *(pickers + attach if apart else attach + pickers), self.send_button]
        for before, after in zip(order, order[1:]):
            QWidget.setTabOrder(before, after)

    # -- send / stop -------------------------------------------------------------
    def _button_clicked(self) -> None:
        if self._running:
            self.stopClicked.emit()
        else:
            self.submit()
        # A click gave the button the focus: the typing goes back to the input, so the next
        # message (or Esc to stop) needs no click, and the focus never sits on a changing button.
        self.input.setFocus(Qt.FocusReason.OtherFocusReason)

    def submit(self) -> None:
        if self._running:
            return
        text = self.input.toPlainText().strip()
        if not text and not self.images:
            return
        if text and any(hook(text) for hook in self.submit_hooks):
            return
        if self.images:
            refusal = self.image_support() if self.image_support is not None else None
            if refusal:  # the model changed since the image was attached: nothing is sent, nothing lost
                self._hint(refusal)
                return
        for decorate in self.message_decorators:
            text = decorate(text)
        self.input.clear()
        self.sendClicked.emit(text)

    # -- images ----------------------------------------------
    def offer_images(self, images: list[ImageBlob], problems: list[str]) -> None:
        """Attach pasted or dropped images (or say in one sentence why not)."""
        refusal = self.image_support() if images and self.image_support is not None else None
        if refusal:
            self._hint(refusal)
            return
        room = MAX_ATTACHED - len(self.images)
        if len(images) > room:
            problems = [*problems, f"A message takes at most {counted(MAX_ATTACHED, 'image')}."]
            images = images[:max(0, room)]
        known = {b.digest for b in self.images}
        for blob in images:
            if blob.digest not in known:
                known.add(blob.digest)
                self.images.append(blob)
        self._show_chips()
        self._hint(problems[0] if problems else "")

    def pick_images(self) -> QFileDialog | None:
        """Images…: a file dialog, opened (never ``exec()``: the event loop keeps running); the
        chosen files are read and checked like a dropped file. For a model known not to take
        images the dialog does not open and the hint says why (the capability rule of paste)."""
        refusal = self.image_support() if self.image_support is not None else None
        if refusal:
            self._hint(refusal)
            return None
        dialog = QFileDialog(self, "Attach images")
        dialog.setObjectName("attachImageDialog")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.setNameFilters(["Images (*.png *.jpg *.jpeg *.gif *.webp)", "All files (*)"])
        dialog.filesSelected.connect(self._picked)
        dialog.finished.connect(dialog.deleteLater)  # one dialog per click, gone when it closes
        self.image_dialog = dialog
        dialog.open()
        return dialog

    def _picked(self, paths: list[str]) -> None:
        images: list[ImageBlob] = []
        problems: list[str] = []
        for path in paths:
            try:
                images.append(read_image_file(path))
            except ImageRefused as exc:
                problems.append(str(exc))
        self.offer_images(images, problems)

    def restore_draft(self, text: str, images: list[ImageBlob], sentence: str) -> None:
        """Put back a message the turn refused (Ollama tells whether a model reads images only
        when asked): its text, unless the person has started another, its images as chips
        (without the capability check: the person decides what to remove), and the sentence."""
        if not self.input.toPlainText().strip():
            self.input.setPlainText(text)
        known = {b.digest for b in self.images}
        self.images += [b for b in images if b.digest not in known][:max(0, MAX_ATTACHED - len(self.images))]
        self._show_chips()
        self._hint(sentence)

    def take_images(self) -> list[ImageBlob]:
        """The attached images, for the message being sent; the composer is empty of them after."""
        images, self.images = self.images, []
        self._show_chips()
        return images

    def remove_image(self, index: int) -> None:
        if 0 <= index < len(self.images):
            del self.images[index]
            self._show_chips()

    def _show_chips(self) -> None:
        from cks_desktop.ui.chat.image_view import ImageThumb, describe

        while self._chips.count() > 1:
            taken = self._chips.takeAt(0)
            widget = taken.widget() if taken is not None else None
            if widget is not None:
                widget.deleteLater()
        for index, blob in enumerate(self.images):
            chip = QWidget()
            chip.setObjectName("composerImageChip")
            row = QHBoxLayout(chip)
            row.setContentsMargins(0, 0, 0, 0)
            row.setSpacing(0)
            part = part_of(blob)
            thumb = ImageThumb(part, px=40)
            thumb.setEnabled(False)  # a chip shows what will be sent; the chat's thumbnails enlarge
            row.addWidget(thumb)
            remove = QToolButton()
            remove.setObjectName("composerImageRemove")
            remove.setAutoRaise(True)
            remove.setToolTip(plain_tooltip(f"Remove this image ({describe(part)})"))
            remove.setAccessibleName("Remove the image")
            theme.bind_icon(remove, "x", "faint")
            remove.clicked.connect(lambda _checked=False, i=index: self.remove_image(i))
            row.addWidget(remove)
            self._chips.insertWidget(self._chips.count() - 1, chip)
        self.attachments.setVisible(bool(self.images))

    def set_running(self, running: bool) -> None:
        self._running = running
        if not running and self.send_button.hasFocus():  # Stop became Send under the focus
            self.input.setFocus(Qt.FocusReason.OtherFocusReason)
        self.send_button.setText("Stop" if running else "Send")
        self.send_button.setAccessibleName("Stop the answer" if running else "Send the message")
        self.send_button.setToolTip("Stop (Esc)" if running else "Send (Enter or Ctrl+Enter)")

    def show_context(self, usage: ContextUsage | None) -> None:
        """The shown session's last measured request (None: nothing known, the meter hides)."""
        self.context_meter.show_usage(usage)
        self._place_pickers()  # the meter shown or hidden changes what fits in the row

    # -- provider / model --------------------------------------------------------
    def show_provider(self, name: str, model: str, models: list[str] | None = None) -> None:
        self._syncing = True
        try:
            index = self.provider_box.findData(name)
            if name != self._shown[0]:
                self._fetched = []  # another provider: its list is not this one's
            self.provider_box.setCurrentIndex(index)
            if models is not None:
                self._fetched = sorted(dict.fromkeys(m for m in models if m))
            profile = PROFILES.get(name)
            known = self._fetched or [m for m in dict.fromkeys([model, profile.default_model if profile else ""]) if m]
            self.model_box.clear()
            self.model_box.addItems(known)
            self.model_box.setEditText(model)
            edit = self.model_box.lineEdit()
            if edit is not None:
                edit.setCursorPosition(0)  # a narrow box shows the name's start ("claude-son…"), not its tail
            self._shown = (name, model)
            self._confirm = None
        finally:
            self._syncing = False
        self._hint("")
        self.fetch_button.setEnabled(self._can_list())

    def _provider_activated(self, _index: int) -> None:
        name = self.provider_box.currentData()
        if not self._syncing and name != self._shown[0]:
            self._shown = (name, "")
            self.providerChosen.emit(name, "")

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        # Enter in the model box, taken here once: an editable QComboBox passes an Enter its line
        # edit did not take on to itself and back, so ``returnPressed`` would fire twice and a
        # "press Enter again" check would pass on one press.
        if obj is self.model_box.lineEdit() and isinstance(event, QKeyEvent) \
                and event.type() == QEvent.Type.KeyPress and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._model_edited(chosen=False)
            return True
        return super().eventFilter(obj, event)

    def _model_edited(self, *, chosen: bool = False) -> None:
        """Enter or a choice: check the name, then apply it (never on a keystroke or focus-out)."""
        if self._syncing:
            return
        name = self.provider_box.currentData()
        model = self.model_box.currentText().strip()
        problem = model_problem(model)
        if problem is None and not chosen and self._fetched and model not in self._fetched \
                and self._confirm != model:
            self._confirm = model
            problem = (f"{model} is not among the {counted(len(self._fetched), 'model')} the provider listed; "
                       "press Enter again to use it anyway.")
        if problem is not None:
            self._hint(problem)
            return
        self._confirm = None
        self._hint("")
        if name and (name, model) != self._shown:
            self._shown = (name, model)
            self.providerChosen.emit(name, model)

    def _hint(self, text: str) -> None:
        self.model_hint.setText(text)
        self.model_hint.setVisible(bool(text))
        self.model_box.setToolTip(plain_tooltip(text or "Model: type a name and press Enter, or pick one from the list"))

    def set_models(self, models: list[str]) -> None:
        """The provider's list (Fetch models): offered in the box, the typed text kept."""
        self._fetched = sorted(dict.fromkeys(m for m in models if m))
        self._fill(self._fetched)
        self._hint("" if self._fetched else "The provider listed no models.")

    def set_fetching(self, fetching: bool, problem: str = "") -> None:
        self.fetch_button.setEnabled(not fetching and self._can_list())
        self.fetch_button.setText("Fetching…" if fetching else "Fetch models")
        if problem:
            self._hint(problem)

    def _can_list(self) -> bool:
        profile = PROFILES.get(self.provider_box.currentData() or "")
        return profile is not None and profile.can_list_models

    def _fill(self, models: list[str]) -> None:
        text = self.model_box.currentText()
        self._syncing = True
        try:
            self.model_box.clear()
            self.model_box.addItems(models)
            self.model_box.setEditText(text)
        finally:
            self._syncing = False


def model_problem(model: str) -> str | None:
    """Why ``model`` cannot be a model name (one sentence), or None when it can."""
    if not model:
        return "Type a model name, or pick one from the list (Fetch models fills it)."
    if any(c.isspace() or not c.isprintable() for c in model):
        return f"A model name has no spaces or control characters: {model!r}."
    if len(model) > 200:
        return "That model name is longer than 200 characters."
    return None
