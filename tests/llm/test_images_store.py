"""the bytes decide what an image is (tools/images.py), and the session keeps
each image once (agent/images.py, table chat_images) with the transcript holding references."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent.images import ImageStore, read_image_file
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.messages import ImagePart, Message, Text, ToolResultPart
from cks_desktop.tools.images import MAX_IMAGE_BYTES, ImageRefused, from_base64, sniff

from tests.pgfixtures import open_graph, pg_cluster, pg_url  # noqa: F401
from tests.png import make_gif, make_jpeg_header, make_png, make_webp_vp8x


@pytest.fixture
def graph(open_graph: Callable[[], GraphStore]) -> Iterator[Any]:
    store = open_graph()  # SQLite and PostgreSQL: the images' own SQL runs on both
    store.session = store.create_session("Images")  # type: ignore[attr-defined]
    try:
        yield store
    finally:
        store.close()


@pytest.mark.parametrize(("data", "media", "size"), [
    (make_png(17, 9), "image/png", (17, 9)),
    (make_jpeg_header(640, 480), "image/jpeg", (640, 480)),
    (make_gif(3, 2), "image/gif", (3, 2)),
    (make_webp_vp8x(300, 200), "image/webp", (300, 200)),
])
def test_the_magic_number_and_header_say_what_an_image_is(data: bytes, media: str, size: tuple[int, int]) -> None:
    blob = sniff(data, claimed="image/jpeg")  # what the sender claims does not count
    assert (blob.media_type, (blob.width, blob.height)) == (media, size)


@pytest.mark.parametrize(("data", "why"), [
    (b"", "The image is empty."),
    (b"<svg xmlns='http://www.w3.org/2000/svg'><image href='http://example.invalid/x'/></svg>",
     "This is not a PNG, JPEG, GIF or WebP image; the chat takes only those."),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "The PNG image has no header (IHDR), so it is not a readable picture."),
    (make_png(1, 1)[:16] + b"\x00\x00\x00\x00\x00\x00\x00\x01" + make_png(1, 1)[24:],
     "The image's header says it is 0×1 pixels, which is not a picture the chat can show."),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF", "The JPEG image has no frame header the app can read."),
])
def test_anything_else_is_refused_in_one_sentence(data: bytes, why: str) -> None:
    with pytest.raises(ImageRefused) as caught:
        sniff(data)
    assert str(caught.value) == why


def test_size_cap_and_bad_base64() -> None:
    with pytest.raises(ImageRefused, match=r"^The image is 20\.0 MB; the chat takes images up to 20 MB\.$"):
        sniff(make_png() + b"\0" * (MAX_IMAGE_BYTES - len(make_png()) + 1))
    with pytest.raises(ImageRefused, match="larger than 20 MB"):
        from_base64("A" * (MAX_IMAGE_BYTES * 2))  # refused before it is decoded
    with pytest.raises(ImageRefused, match="not valid base64"):
        from_base64("not base64 at all!")
    assert from_base64(base64.b64encode(make_png()).decode()).media_type == "image/png"


def test_a_file_is_checked_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "huge.png"
    with big.open("wb") as f:
        f.truncate(MAX_IMAGE_BYTES + 1)  # sparse: costs nothing on disk
    with pytest.raises(ImageRefused, match=r"^huge\.png is 20\.0 MB; the chat takes images up to 20 MB\.$"):
        read_image_file(big)
    with pytest.raises(ImageRefused, match="is a folder, not an image"):
        read_image_file(tmp_path)


def test_an_image_is_stored_once_and_the_transcript_keeps_a_reference(graph: Any) -> None:
    sid = graph.session.id
    images = ImageStore(graph)
    first = images.put(sid, sniff(make_png(8, 8)))
    again = images.put(sid, sniff(make_png(8, 8)))
    other = images.put(sid, sniff(make_png(8, 8, (1, 2, 3))))
    assert first.image_id == again.image_id != other.image_id
    assert sorted(images.ids(sid)) == sorted([first.image_id, other.image_id])
    transcript = TranscriptStore.for_store(graph)
    transcript.append(sid, [Message("user", [Text("look"), first]),
                            Message("assistant", [Text("ok")])])
    with graph.connection_lock() as conn:
        raw = conn.execute("SELECT parts FROM chat_messages WHERE session_id = ? AND seq = 1", (sid,)).fetchone()[0]
    assert json.loads(raw)[1] == {"kind": "image", "id": first.image_id, "media_type": "image/png", "width": 8,
                                  "height": 8, "size": first.size}
    loaded = transcript.load(sid)
    assert loaded[0].images[0].data == b""  # a reference
    hydrated = images.hydrate(sid, loaded)
    assert hydrated[0].images[0].data == first.data
    assert hydrated[1] is loaded[1]  # messages without images are the same objects


def test_old_transcripts_load_and_a_missing_image_stays_a_reference(graph: Any) -> None:
    sid = graph.session.id
    old = {"role": "tool", "parts": [{"kind": "tool_result", "call_id": "c1", "name": "mcp:x:shot",
                                      "content": "[image: image/png, 2,048 bytes]", "is_error": False}]}
    message = Message.from_json(old)
    assert message.tool_results[0].images == () and message.to_json() == old
    gone = Message("tool", [ToolResultPart("c1", "mcp:x:shot", "[image]", images=(ImagePart("f" * 64, "image/png"),))])
    [kept] = ImageStore(graph).hydrate(sid, [gone])
    assert kept.tool_results[0].images[0].data == b""


def test_images_no_message_refers_to_go_with_the_deleted_turn_or_the_cleared_chat(graph: Any) -> None:
    """Orphans (images-2): Delete of an exchange drops the images only it referred to, in the same
    transaction; an image another message still shows stays; Clear drops them all; Regenerate
    (``delete_answer``) drops a tool's image of the replaced answer."""
    sid = graph.session.id
    images, transcript = ImageStore(graph), TranscriptStore.for_store(graph)
    first, second, shared = (images.put(sid, sniff(make_png(w, 2))) for w in (3, 4, 5))
    tool_image = images.put(sid, sniff(make_png(6, 2)))
    transcript.append(sid, [Message("user", [Text("one"), first, shared]), Message("assistant", [Text("A.")])])
    transcript.append(sid, [Message("user", [Text("two"), second, shared]),
                            Message("tool", [ToolResultPart("c1", "draw", "[image]", images=(tool_image,))]),
                            Message("assistant", [Text("B.")])])
    assert len(images.ids(sid)) == 4
    transcript.delete_answer(sid, 2)  # Regenerate: the tool's image of that answer goes
    assert set(images.ids(sid)) == {first.image_id, second.image_id, shared.image_id}
    transcript.delete_turn(sid, 1)
    assert set(images.ids(sid)) == {second.image_id, shared.image_id}  # shared is still shown by turn 2
    other = graph.create_session("Other")
    kept = images.put(other.id, sniff(make_png(3, 2)))  # the same bytes in another session are its own row
    transcript.clear(sid)
    assert images.ids(sid) == [] and images.ids(other.id) == [kept.image_id]
