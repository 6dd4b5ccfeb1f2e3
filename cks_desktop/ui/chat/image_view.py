"""Images in the chat: thumbnails, a larger view, Save.

Only bytes the chat already holds are shown (a tool's image block, the person's paste or
drop, the session's store): nothing here loads a URL. Decoding happens here, in the UI, with
``QImage`` (the core only reads headers, ``tools/images.py``); bytes Qt cannot decode show
as a plain "cannot show" chip, never a crash. Thumbnails are read at their small size, within
an allocation limit, and big images off the GUI thread (``thumbnails.py``). A thumbnail is a button: click (or Enter)
opens ``ImageDialog`` with the image as large as the screen allows and a Save… button (a
file dialog opened without a nested event loop).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QGuiApplication, QIcon, QImage, QPixmap
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFileDialog, QHBoxLayout, QPushButton, QScrollArea,
                               QToolButton, QVBoxLayout, QWidget)

from cks_desktop.llm.messages import ImagePart
from cks_desktop.ui.chat.thumbnails import SYNC_PIXELS, Outcome, decode_later, decode_scaled, header_size
from cks_desktop.ui import theme
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import plain_tooltip

THUMB_PX = 72
_SUFFIX = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


def describe(part: ImagePart) -> str:
    size = part.size or len(part.data)
    return f"{part.media_type} · {part.width}×{part.height} · {size:,} bytes"


def decode(data: bytes) -> QImage | None:
    """The decoded image, or None when Qt cannot read the bytes."""
    if not data:
        return None
    image = QImage.fromData(data)
    return None if image.isNull() else image


def thumbnail(data: bytes, px: int = THUMB_PX) -> QPixmap | None:
    """The thumbnail, decoded here and now at its small size (None when it cannot be shown)."""
    outcome, image = decode_scaled(data, px)
    return QPixmap.fromImage(image) if outcome is Outcome.DECODED and image is not None else None


class ImageThumb(QToolButton):
    """One thumbnail; ``opened`` when clicked. A big image is decoded on a worker: the button
    shows "loading image…" until then, and ``ready`` is emitted when its picture (or the
    sentence why there is none) is in place; ``pending`` says whether that is still to come."""

    opened = Signal(object)  # the ImagePart
    ready = Signal()

    def __init__(self, part: ImagePart, parent: QWidget | None = None, *, px: int = THUMB_PX) -> None:
        super().__init__(parent)
        self.part = part
        self.setObjectName("chatImageThumb")
        self.setAutoRaise(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.decoded = False
        self.pending = False
        self.setAccessibleName(f"Image {describe(part)}")
        self.setEnabled(bool(part.data))
        self.clicked.connect(lambda: self.opened.emit(self.part))
        size = header_size(part.data) if part.data else QSize()
        if size.isValid() and size.width() * size.height() > SYNC_PIXELS:
            self.pending = True
            self.setText("loading image…")
            self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            self.setToolTip(plain_tooltip(f"Image ({describe(part)})"))
            decode_later(part.data, px, self, self._show)
        else:
            self._show(*decode_scaled(part.data, px))

    def _show(self, outcome: Outcome, image: QImage | None) -> None:
        part = self.part
        self.pending = False
        if outcome is Outcome.DECODED and image is not None:
            pixmap = QPixmap.fromImage(image)
            self.decoded = True
            icon = QIcon(pixmap)
            # the same picture when disabled (the composer's chips are): Qt's greyed version hid the image
            icon.addPixmap(pixmap, QIcon.Mode.Disabled)
            self.setText("")
            self.setIcon(icon)
            self.setIconSize(QSize(pixmap.width(), pixmap.height()))
            self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
            tip = f"Image ({describe(part)}): click to enlarge or save"
        else:
            match outcome:
                case Outcome.TOO_LARGE:
                    self.setText("image too large to show")
                case Outcome.UNREADABLE | Outcome.DECODED:
                    self.setText("image not available" if not part.data else "cannot show this image")
            self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            tip = f"Image ({describe(part)})" + (": click to save it" if outcome is Outcome.TOO_LARGE else "")
        self.setToolTip(plain_tooltip(tip))
        self.ready.emit()


class ImageStrip(QWidget):
    """A row of thumbnails (a tool row's images, a message's images)."""

    def __init__(self, parent: QWidget | None = None, *, right: bool = False) -> None:
        super().__init__(parent)
        self.setObjectName("chatImageStrip")
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(6)
        self._layout.addStretch(1)  # before the thumbnails (``right``: under the person's bubble) or after
        self._right = right
        self.thumbs: list[ImageThumb] = []
        self.dialog: ImageDialog | None = None
        self._shown: tuple[tuple[str, int], ...] = ()

    def set_images(self, parts: Sequence[ImagePart]) -> None:
        key = tuple((p.image_id, len(p.data)) for p in parts)
        if key == self._shown:
            return
        self._shown = key
        for thumb in self.thumbs:
            self._layout.removeWidget(thumb)
            thumb.deleteLater()
        self.thumbs = []
        for part in parts:
            thumb = ImageThumb(part)
            thumb.opened.connect(self.open_image)
            self._layout.insertWidget(self._layout.count() - (0 if self._right else 1), thumb)
            self.thumbs.append(thumb)
        self.setVisible(bool(parts))

    def open_image(self, part: ImagePart) -> "ImageDialog":
        if self.dialog is not None:
            self.dialog.close()
        self.dialog = ImageDialog(part, self.window())
        self.dialog.open()
        return self.dialog


class ImageDialog(QDialog):
    """The image as large as fits on the screen, with Save… and Close."""

    saved = Signal(str)  # the path written, or the sentence why not

    def __init__(self, part: ImagePart, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.part = part
        self.setObjectName("chatImageDialog")
        self.setWindowTitle("Image")
        layout = QVBoxLayout(self)
        self.picture = plain_label(name="chatImagePicture")
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        screen = QGuiApplication.primaryScreen()
        room = screen.availableGeometry().size() * 0.8 if screen is not None else QSize(1024, 768)
        # read at most at the size the screen can show, within the allocation limit (thumbnails.py)
        image = decode_scaled(part.data, max(room.width(), room.height()))[1]
        if image is not None:
            pixmap = QPixmap.fromImage(image)
            if pixmap.width() > room.width() or pixmap.height() > room.height():
                pixmap = pixmap.scaled(room, Qt.AspectRatioMode.KeepAspectRatio,
                                       Qt.TransformationMode.SmoothTransformation)
            elif pixmap.width() < 256 and pixmap.height() < 256:  # a tiny icon: enlarge it, crisp
                factor = max(1, 256 // max(pixmap.width(), pixmap.height(), 1))
                pixmap = pixmap.scaled(pixmap.width() * factor, pixmap.height() * factor,
                                       Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.FastTransformation)
            self.picture.setPixmap(pixmap)
        else:
            self.picture.setText("This image cannot be shown.")
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.picture)
        layout.addWidget(scroll, 1)
        self.caption = plain_label(describe(part), name="chatImageCaption")
        layout.addWidget(self.caption)
        self.status = plain_label("", name="chatImageStatus", wrap=True)
        self.status.hide()
        layout.addWidget(self.status)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.save_button = QPushButton("Save…")
        self.save_button.setObjectName("chatImageSave")
        self.save_button.setToolTip("Save the image to a file")
        theme.bind_icon(self.save_button, "floppy-disk")
        self.save_button.setEnabled(bool(part.data))
        self.save_button.clicked.connect(self.ask_where)
        buttons.addButton(self.save_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.file_dialog: QFileDialog | None = None
        self.resize(min(room.width(), max(360, (image.width() if image else 0) + 48)),
                    min(room.height(), max(280, (image.height() if image else 0) + 120)))

    def suggested_name(self) -> str:
        return f"image-{self.part.image_id[:12] or 'chat'}.{_SUFFIX.get(self.part.media_type, 'img')}"

    def ask_where(self) -> QFileDialog:
        """The save dialog, opened (never exec()): ``fileSelected`` writes the file."""
        dialog = QFileDialog(self, "Save the image")
        dialog.setObjectName("chatImageSaveDialog")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        suffix = _SUFFIX.get(self.part.media_type, "img")
        dialog.setNameFilter(f"{self.part.media_type} (*.{suffix})")
        dialog.setDefaultSuffix(suffix)
        dialog.selectFile(self.suggested_name())
        dialog.fileSelected.connect(self.save_to)
        self.file_dialog = dialog
        dialog.open()
        return dialog

    def save_to(self, path: str) -> bool:
        """Write the bytes as they came (no re-encoding); one sentence on failure."""
        target = Path(path)
        try:
            tmp = target.with_name(target.name + ".part")
            tmp.write_bytes(self.part.data)
            tmp.replace(target)
        except OSError as exc:
            self._say(f"The image could not be saved: {exc.strerror or exc}.")
            self.saved.emit("")
            return False
        self._say(f"Saved {target.name}.")
        self.saved.emit(str(target))
        return True

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.status.show()
