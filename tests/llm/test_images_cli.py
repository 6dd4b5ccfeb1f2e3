"""`cks-desktop chat --session S --image FILE PROMPT`.

The real CLI in a subprocess against the fake servers (real wire protocol): the image reaches a
vision model in its vendor's format, is stored once in the session and kept in the transcript as
a reference; a model without images refuses in one sentence and nothing is sent or saved; a file
that is not an image is a usage error (exit 2) in one line; the Markdown export shows it inline.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from cks_desktop.agent.images import ImageStore
from cks_desktop.graph.store import GraphStore

from tests.agent.test_chat_cli import chat, cks, home, one_line_error  # noqa: F401 - home is a fixture
from tests.fakes.providers import make_fake
from tests.fakes.script import text_turn
from tests.png import make_png


def test_chat_image_reaches_a_vision_model_and_the_export(home: tuple[Path, str], tmp_path: Path) -> None:
    root, sid = home
    picture = tmp_path / "chart.png"
    png = make_png(5, 7)
    picture.write_bytes(png)
    with make_fake("openai") as fake:
        fake.queue(text_turn("A chart."))
        proc = cks(root, "chat", "--session", sid, "--provider", "openai", "--base-url", fake.base_url,
                   "--model", "gpt-4o", "--image", str(picture), "What is this?", provider="openai")
        assert proc.returncode == 0, proc.stderr
        [request] = fake.generation_requests
    user = [m for m in request.body["messages"] if m["role"] == "user"][-1]
    assert user["content"] == [{"type": "text", "text": "What is this?"},
                               {"type": "image_url",
                                "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()}}]
    with GraphStore.open(root / "cks.sqlite3") as store:
        assert len(ImageStore(store).ids(sid)) == 1
        with store.connection_lock() as conn:
            raw = "".join(r[0] for r in conn.execute("SELECT parts FROM chat_messages WHERE session_id = ?", (sid,)))
    assert base64.b64encode(png).decode() not in raw  # the transcript keeps the reference only
    lines = cks(root, "chat", "--session", sid, "--history", "--json").stdout.splitlines()
    first = json.loads(lines[0])  # one JSON object per saved row
    assert first["role"] == "user"
    [image] = [p for p in first["parts"] if p["kind"] == "image"]
    assert (image["media_type"], image["width"], image["height"], image["size"]) == ("image/png", 5, 7, len(png))
    out = tmp_path / "chat.md"
    assert cks(root, "chat", "--session", sid, "--export", str(out)).returncode == 0
    assert f"![image/png 5×7](data:image/png;base64,{base64.b64encode(png).decode()})" in out.read_text("utf-8")
    as_json = tmp_path / "chat.json"
    assert cks(root, "chat", "--session", sid, "--export", str(as_json)).returncode == 0
    exported = json.loads(as_json.read_text("utf-8"))
    assert exported["images"][image["id"]] == {"media_type": "image/png", "width": 5, "height": 7,
                                                "data": base64.b64encode(png).decode()}


def test_a_model_without_images_refuses_in_one_sentence(home: tuple[Path, str], tmp_path: Path) -> None:
    root, sid = home
    picture = tmp_path / "chart.png"
    picture.write_bytes(make_png())
    with make_fake("openai") as fake:
        proc = chat(root, fake, sid, "--image", str(picture), "What is this?")  # gpt-test: no images
        assert fake.generation_requests == []
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "gpt-test (OpenAI-compatible) does not take images" in proc.stdout + proc.stderr
    assert cks(root, "chat", "--session", sid, "--history", "--json").stdout == ""  # nothing was saved


def test_a_file_that_is_not_an_image_is_a_usage_error(home: tuple[Path, str], tmp_path: Path) -> None:
    root, sid = home
    page = tmp_path / "page.html"
    page.write_text("<html><img src='http://example.invalid/x.png'></html>", encoding="utf-8")
    with make_fake("openai") as fake:
        proc = chat(root, fake, sid, "--image", str(page), "Look")
        line = one_line_error(proc, 2)
        missing = one_line_error(chat(root, fake, sid, "--image", str(tmp_path / "nope.png"), "Look"), 2)
        assert fake.requests == []
    assert line.endswith("page.html: This is not a PNG, JPEG, GIF or WebP image; the chat takes only those.")
    assert "There is no file" in missing
