"""paste or drop an image into the composer and send it, a
tool row's thumbnails (enlarge, save), the sentence for a model without images, and URLs that
are never fetched.

A real window on a real data folder; the real Anthropic adapter talks to the fake server, so
the request body the test reads is what the SDK really sent. Waits are on the turn's task or
a condition, never fixed sleeps.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QColor, QDragEnterEvent, QDropEvent, QImage
from PySide6.QtWidgets import QApplication, QFileDialog

from cks_desktop.agent.images import ImageStore, part_of
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.tools.images import sniff
from cks_desktop.ui.chat.composer import Composer
from cks_desktop.ui.chat.image_view import ImageDialog, ImageStrip
from cks_desktop.ui.chat.message_widget import MessageWidget
from cks_desktop.ui.chat.model import MessageItem, RowState, ToolItem
from cks_desktop.ui.chat.tool_row import ToolCallRow

from tests.fakes.script import text_turn
from tests.png import make_png
from tests.watched_http import watched_server
from tests.ui.conftest import open_window
from tests.ui.helpers import wait


@pytest.fixture
def watched() -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1 that records every request: nothing may ever reach it."""
    with watched_server() as watched:
        yield watched


def _image_mime(color: str = "#2080f0", size: int = 24) -> QMimeData:
    image = QImage(size, size, QImage.Format.Format_RGB32)
    image.fill(QColor(color))
    mime = QMimeData()
    mime.setImageData(image)
    return mime


def _drop(widget: Any, mime: QMimeData) -> None:
    """A real drag-enter and drop on the input's viewport (what a file manager sends)."""
    target = widget.viewport()
    at = QPointF(target.rect().center())
    enter = QDragEnterEvent(QPoint(int(at.x()), int(at.y())), Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, enter)
    drop = QDropEvent(at, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, drop)


# -- the composer ------------------------------------------------------------------------------
def test_a_pasted_image_waits_as_a_chip_with_a_remove_button(qtbot) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    mime = _image_mime()
    QApplication.clipboard().setMimeData(mime)  # the clipboard owns it now; keep the wrapper alive
    composer.input.paste()
    assert len(composer.images) == 1 and composer.images[0].media_type == "image/png"
    assert composer.attachments.isVisible()
    assert composer.input.toPlainText() == ""  # the image is not pasted as text
    remove = composer.attachments.findChildren(type(composer.fetch_button), "composerImageRemove")
    assert len(remove) == 1 and "Remove this image (image/png · 24×24" in remove[0].toolTip()
    qtbot.mouseClick(remove[0], Qt.MouseButton.LeftButton)
    assert composer.images == [] and not composer.attachments.isVisible()


def test_a_dropped_image_file_is_attached_and_a_dropped_web_url_is_text_never_fetched(
        qtbot, tmp_path: Path, watched: tuple[str, list[str]]) -> None:
    url, hits = watched
    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    picture = tmp_path / "chart.png"
    picture.write_bytes(make_png(6, 4))
    files = QMimeData()
    files.setUrls([QUrl.fromLocalFile(str(picture))])
    _drop(composer.input, files)
    assert [(b.width, b.height) for b in composer.images] == [(6, 4)]
    # a web address is pasted as the words of the address, and nothing is fetched
    web = QMimeData()
    web.setUrls([QUrl(f"{url}/remote.png")])
    web.setText(f"{url}/remote.png")
    composer.input.insertFromMimeData(web)
    assert f"{url}/remote.png" in composer.input.toPlainText()
    assert len(composer.images) == 1 and hits == []
    # a file that is not an image is refused in one sentence
    script = tmp_path / "notes.txt"
    script.write_text("hello", encoding="utf-8")
    text_file = QMimeData()
    text_file.setUrls([QUrl.fromLocalFile(str(script))])
    composer.input.insertFromMimeData(text_file)
    assert composer.model_hint.isVisibleTo(composer)
    assert composer.model_hint.text() == "notes.txt: This is not a PNG, JPEG, GIF or WebP image; the chat takes only those."
    assert len(composer.images) == 1


def test_a_model_without_images_gets_a_sentence_and_no_attachment(qtbot) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    composer.image_support = lambda: "llama3.1 (Ollama) does not take images: remove the image or choose another."
    composer.input.insertFromMimeData(_image_mime())
    assert composer.images == []
    assert composer.model_hint.text().startswith("llama3.1 (Ollama) does not take images")


# -- the window: paste, send, the wire, the transcript, reload -----------------------------------
@pytest.mark.asyncio
async def test_paste_and_send_an_image_reaches_the_model_and_is_stored_once(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(text_turn("A blue square."))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        panel = window.chat_panel
        composer = panel.composer
        composer.input.insertFromMimeData(_image_mime())
        assert len(composer.images) == 1, composer.model_hint.text()
        blob = composer.images[0]
        qtbot.keyClicks(composer.input, "What colour is it?")
        qtbot.mouseClick(composer.send_button, Qt.MouseButton.LeftButton)
        controller = panel.controller
        assert controller is not None and controller.task is not None
        await wait(controller.task)
        assert composer.images == [] and not composer.attachments.isVisible()
        body = anthropic_fake.generation_requests[-1].body
        user = body["messages"][0]["content"]
        assert user[0] == {"type": "text", "text": "What colour is it?"}
        assert user[1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                       "data": base64.b64encode(blob.data).decode()}}
        sid = controller.session_id
        store = controller.assistant.store
        assert ImageStore(store).ids(sid) == [blob.digest]
        history = TranscriptStore.for_store(store).history(sid)
        [image] = history[0].message.images
        assert image.image_id == blob.digest and image.data == b""  # a reference, not the bytes
        # the person's message shows its image as a thumbnail
        [item] = [i for i in panel.model.items if isinstance(i, MessageItem) and i.role == "user"]
        assert [p.image_id for p in item.images] == [blob.digest]
        strips = panel.view.findChildren(ImageStrip)
        assert strips and strips[0].thumbs[0].decoded
        # reloaded from the transcript: the bytes come back from the session's store
        controller.load()
        [item] = [i for i in panel.model.items if isinstance(i, MessageItem) and i.role == "user"]
        assert item.images[0].data == blob.data


# -- the tool row ------------------------------------------------------------------------------
def _tool_item(data: bytes, url: str = "http://127.0.0.1:9/x") -> ToolItem:
    part = part_of(sniff(data))
    return ToolItem("c1", "mcp:painter:draw", "painter · draw", "mcp:painter", {}, state=RowState.DONE,
                    duration_ms=12.0, result=f"Here. ![remote]({url}/pixel.png)\n[resource link: full — {url}/full.png]",
                    images=(part,))


def test_a_tool_row_shows_thumbnails_that_enlarge_and_save(qtbot, tmp_path: Path,
                                                            watched: tuple[str, list[str]]) -> None:
    url, hits = watched
    png = make_png(40, 30)
    row = ToolCallRow(_tool_item(png, url))
    qtbot.addWidget(row)
    row.show()
    assert row.image_strip is not None and row.image_strip.isVisible()  # shown collapsed, too
    [thumb] = row.image_strip.thumbs
    assert thumb.decoded and "image/png · 40×30" in thumb.toolTip()
    qtbot.mouseClick(thumb, Qt.MouseButton.LeftButton)
    dialog = row.image_strip.dialog
    assert isinstance(dialog, ImageDialog) and dialog.isVisible()
    pixmap = dialog.picture.pixmap()
    assert not pixmap.isNull() and pixmap.width() >= 40
    assert dialog.caption.text() == "image/png · 40×30 · " + f"{len(png):,} bytes"
    # Save… opens a file dialog (no nested loop); choosing a file writes the bytes as they came
    files = dialog.ask_where()
    assert isinstance(files, QFileDialog) and files.isVisible()
    target = tmp_path / "saved.png"
    files.fileSelected.emit(str(target))
    assert target.read_bytes() == png
    assert dialog.status.text() == "Saved saved.png."
    assert not dialog.save_to(str(tmp_path / "missing" / "x.png"))
    assert dialog.status.text().startswith("The image could not be saved:")
    files.close()
    dialog.close()
    # the URLs in the result are text: expanding the row fetches nothing
    row.set_expanded(True)
    assert row.result_block is not None and f"{url}/full.png" in row.result_block.code()
    assert hits == []


def test_bytes_qt_cannot_decode_show_a_chip_not_a_crash(qtbot) -> None:
    broken = make_png(4, 4)[:40]  # a valid header, the picture cut off
    item = _tool_item(make_png(4, 4))
    item.images = (part_of(sniff(broken)),)
    row = ToolCallRow(item)
    qtbot.addWidget(row)
    assert row.image_strip is not None
    [thumb] = row.image_strip.thumbs
    assert not thumb.decoded and thumb.text() == "cannot show this image"


def test_a_markdown_image_in_an_answer_is_never_fetched(qtbot, watched: tuple[str, list[str]]) -> None:
    url, hits = watched
    widget = MessageWidget(MessageItem("assistant", f"Look: ![chart]({url}/chart.png) and <img src='{url}/x.png'>"))
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    QApplication.processEvents()
    assert hits == []


def test_the_images_setting_is_saved_and_reaches_the_adapter(qtbot, tmp_path: Path) -> None:
    """Settings → Providers → Images: "The model takes images" for an OpenAI-compatible server's
    model becomes the adapter's ``images`` option, so its requests carry images."""
    from cks_desktop.llm import vision
    from cks_desktop.llm.factory import provider_config
    from cks_desktop.llm.profiles import OPENAI
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings
    from cks_desktop.ui.settings.providers_page import ProviderForm
    from cks_desktop.ui.tasks import TaskTracker

    settings = Settings.load(tmp_path / "settings.json")
    form = ProviderForm("openai", settings, SecretStore(secure=False), TaskTracker())
    qtbot.addWidget(form)
    assert form.images_box.currentData() == ""
    form.url_edit.setText("http://127.0.0.1:9/v1")
    form.model_box.setEditText("llava-served-by-vllm")
    form.images_box.setCurrentIndex(form.images_box.findData("yes"))
    form.save(settings)
    assert settings.provider("openai")["images"] == "yes"
    config = provider_config("openai", settings, None)
    assert vision.known_images(OPENAI, config.model, config.options) is True
    form.images_box.setCurrentIndex(form.images_box.findData(""))
    form.save(settings)
    assert "images" not in settings.provider("openai")



def test_the_presenter_puts_a_tool_s_images_on_its_row_live_and_after_a_reload() -> None:
    from cks_desktop.agent import events as ev
    from cks_desktop.agent.events import CallState
    from cks_desktop.agent.transcript import CallRecord, SavedMessage
    from cks_desktop.llm.messages import Message, ToolCallPart, ToolResultPart
    from cks_desktop.tools.types import Outcome, ToolResult
    from cks_desktop.ui.chat.model import ChatModel
    from cks_desktop.ui.chat.presenter import ChatPresenter

    blob = sniff(make_png(9, 9))
    model = ChatModel()
    presenter = ChatPresenter(model, lambda name, source: False)
    presenter.add_user("Draw")
    presenter.handle(ev.AssistantMessage(Message("assistant", [ToolCallPart("c1", "mcp:p:draw", {})])))
    presenter.handle(ev.ToolCallStarted("c1", "mcp:p:draw", "p · draw", {}, "mcp:p"))
    presenter.handle(ev.ToolCallFinished("c1", ToolResult("c1", "[image]", Outcome.OK, images=(blob,)), 3.0))
    row = model.tool("c1")
    assert row is not None and [(p.image_id, p.data) for p in row.images] == [(blob.digest, blob.data)]
    # a saved chat: the row gets the references (the controller fills their bytes from the store)
    ref = part_of(blob)
    history = [SavedMessage(1, Message.user("Draw"), "now", turn=1),
               SavedMessage(2, Message("assistant", [ToolCallPart("c1", "mcp:p:draw", {})]), "now",
                            calls=[CallRecord("c1", "mcp:p:draw", "p · draw", "mcp:p", CallState.DONE, 3.0)], turn=1),
               SavedMessage(3, Message("tool", [ToolResultPart("c1", "mcp:p:draw", "[image]", images=(ref,))]), "now",
                            turn=1)]
    presenter.load(history)
    row = model.tool("c1")
    assert row is not None and [p.image_id for p in row.images] == [blob.digest]


# -- a refusal only the turn knows (images-2) -------------------------------------------------------
@pytest.mark.asyncio
async def test_a_turn_that_refuses_the_image_gives_the_draft_back_with_its_images(qtbot, home) -> None:
    """Ollama says whether a model reads images only when asked (``/api/show``), so the composer
    lets the image through and the turn refuses it. Nothing is lost: the text and the image chips
    are back in the composer with the sentence under them, the chat shows no unsaved message (no
    Retry that would resend the text alone), and the stored image is not left behind."""
    from tests.fakes.providers import make_fake, provider_for

    with make_fake("ollama") as fake:
        def factory(_name: str, _settings: Any, _secrets: Any) -> Any:
            return provider_for(fake, model="llama-test")

        async with open_window(home, factory=factory, provider="ollama") as window:
            window.sidebar.create_session()
            panel = window.chat_panel
            composer = panel.composer
            composer.input.insertFromMimeData(_image_mime())
            assert len(composer.images) == 1, composer.model_hint.text()
            blob = composer.images[0]
            qtbot.keyClicks(composer.input, "What is it?")
            qtbot.mouseClick(composer.send_button, Qt.MouseButton.LeftButton)
            controller = panel.controller
            assert controller is not None and controller.task is not None
            await wait(controller.task)
            assert [r.path for r in fake.requests] == ["/api/show"]  # asked, nothing sent
            assert composer.input.toPlainText() == "What is it?"
            assert [b.digest for b in composer.images] == [blob.digest] and composer.attachments.isVisible()
            assert composer.model_hint.isVisibleTo(composer)
            assert composer.model_hint.text().startswith("llama-test (Ollama) does not take images: remove the image")
            assert [i for i in panel.model.items if isinstance(i, MessageItem) and i.role == "user"] == []
            assert not any(getattr(i, "retryable", False) for i in panel.model.items)
            sid = controller.session_id
            assert TranscriptStore.for_store(controller.assistant.store).load(sid) == []
            assert ImageStore(controller.assistant.store).ids(sid) == []


def test_the_image_button_picks_files_without_blocking_and_follows_the_capability_rule(qtbot, tmp_path: Path) -> None:
    """Images… beside the input (images-2): an icon button with a tooltip opens a file dialog
    (``open()``, never ``exec()``); the chosen images become chips, a chosen file that is not one
    is one sentence; for a model known not to take images the dialog does not open and the
    sentence says why."""
    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    button = composer.attach_image_button
    assert not button.icon().isNull() and "image" in button.toolTip().lower() and button.isVisible()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    dialog = composer.image_dialog
    assert isinstance(dialog, QFileDialog) and dialog.isVisible() and dialog.isModal()
    assert dialog.fileMode() == QFileDialog.FileMode.ExistingFiles
    assert "*.png" in ";".join(dialog.nameFilters()) and "*.webp" in ";".join(dialog.nameFilters())
    picture, text = tmp_path / "chart.png", tmp_path / "notes.txt"
    picture.write_bytes(make_png(7, 5))
    text.write_text("hello", encoding="utf-8")
    dialog.filesSelected.emit([str(picture), str(text)])
    dialog.close()
    assert [(b.width, b.height) for b in composer.images] == [(7, 5)] and composer.attachments.isVisible()
    assert composer.model_hint.text() == "notes.txt: This is not a PNG, JPEG, GIF or WebP image; the chat takes only those."
    # a model known not to take images: no dialog, one sentence
    composer.image_dialog = None
    composer.image_support = lambda: "llama3.1 (Ollama) does not take images: remove the image or choose another."
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert composer.image_dialog is None
    assert composer.model_hint.text().startswith("llama3.1 (Ollama) does not take images")


@pytest.mark.asyncio
async def test_an_image_attached_while_editing_is_sent_with_the_edited_message(qtbot, home, anthropic_fake) -> None:
    """Edit and resend with an image pasted in (images-2): the image goes with the new message,
    it is not dropped on the way (the composer hands its images to the edit too)."""
    anthropic_fake.queue(text_turn("First."))
    anthropic_fake.queue(text_turn("A blue square."))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        panel = window.chat_panel
        composer = panel.composer
        qtbot.keyClicks(composer.input, "Hello")
        qtbot.mouseClick(composer.send_button, Qt.MouseButton.LeftButton)
        assert panel.controller is not None and panel.controller.task is not None
        await wait(panel.controller.task)
        [item] = [i for i in panel.model.items if isinstance(i, MessageItem) and i.role == "user"]
        panel.start_edit(item)
        composer.input.insertFromMimeData(_image_mime())
        assert len(composer.images) == 1
        blob = composer.images[0]
        qtbot.mouseClick(composer.send_button, Qt.MouseButton.LeftButton)
        assert panel.controller.task is not None
        await wait(panel.controller.task)
        user = anthropic_fake.generation_requests[-1].body["messages"][0]["content"]
        assert user[0] == {"type": "text", "text": "Hello"}
        assert user[1]["source"]["data"] == base64.b64encode(blob.data).decode()
        assert composer.images == []
