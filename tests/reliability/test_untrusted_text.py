"""Untrusted text in the chat renders inert: raw HTML (script, iframe, style, img,
a), Markdown images (remote, file:, data:), javascript:/file:/data: links, and huge
lines. Nothing is fetched, no link opens without a click and only http(s)/mailto
open at all, markup shows as text, and a huge line renders without freezing the
window (lag probe)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from PySide6.QtCore import QUrl

from cks_desktop.ui.chat import markdown_view
from cks_desktop.ui.chat.markdown_view import MarkdownView
from tests.reliability.lag import LagProbe

HOSTILE = "\n\n".join([
    '<script>alert("x")</script>',
    '<iframe src="https://evil.example/frame"></iframe>',
    '<style>body { display: none }</style>',
    '<img src="https://evil.example/pixel.png" onerror="alert(1)">',
    '<a href="javascript:alert(1)">click me</a>',
    '![tracker](https://evil.example/track.png)',
    '![local](file:///etc/passwd)',
    '![data](data:image/png;base64,iVBORw0KGgo=)',
    '[js](javascript:alert(document.cookie))',
    '[file](file:///etc/passwd)',
    '[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
    '[ok](https://example.org/page)',
    '<https://autolink.example/x>',
])


class Spy(MarkdownView):
    def __init__(self) -> None:
        super().__init__()
        self.requested: list[tuple[str, object]] = []

    def loadResource(self, type: int, name: QUrl) -> object:  # noqa: A002,N802
        result = super().loadResource(type, name)
        self.requested.append((name.toString(), result))
        return result


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    urls: list[str] = []

    class Recorder:
        @staticmethod
        def openUrl(url: QUrl) -> bool:  # noqa: N802
            urls.append(url.toString())
            return True

    monkeypatch.setattr(markdown_view, "QDesktopServices", Recorder)
    return urls


def anchors(view: MarkdownView) -> list[str]:
    found = []
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isAnchor():
                found.append(fmt.anchorHref())
            it += 1
        block = block.next()
    return found


@pytest.mark.asyncio
async def test_hostile_markup_is_inert(qtbot: Any, opened: list[str]) -> None:
    view = Spy()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    view.set_markdown(HOSTILE)
    view.grab()  # lay out and paint: anything that would load, loads now
    await asyncio.sleep(0)
    assert all(result is None for _, result in view.requested), view.requested  # asked, never given
    text = view.toPlainText()
    for literal in ("<script>", "<iframe", "<style>", "<img src=", '<a href="javascript:'):
        assert literal in text, f"{literal} was interpreted instead of shown"
    html = view.document().toHtml()
    assert "<img" not in html and "<script" not in html and "<iframe" not in html.replace("&lt;iframe", "")
    assert opened == []  # nothing opened by rendering
    for href in anchors(view):  # a click opens only http(s)/mailto
        view.anchorClicked.emit(QUrl(href))
    assert opened and all(u.startswith(("https://", "http://", "mailto:")) for u in opened), opened
    assert not any(u.startswith(("javascript:", "file:", "data:")) for u in opened)


@pytest.mark.asyncio
@pytest.mark.parametrize("shape", ["one 200 kB line", "20,000 short lines", "markdown table 2,000 rows", "5 MB answer"])
async def test_huge_text_renders_without_freezing(qtbot: Any, shape: str) -> None:
    text = {"one 200 kB line": "x" * 200_000,
            "20,000 short lines": "\n\n".join(f"line {i}" for i in range(20_000)),
            "markdown table 2,000 rows": "| a | b |\n|---|---|\n" + "\n".join(f"| {i} | {'y' * 20} |"
                                                                          for i in range(2000)),
            "5 MB answer": "word " * 1_000_000}[shape]
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    async with LagProbe(shape):
        await asyncio.sleep(0.02)
        view.set_markdown(text)
        await asyncio.sleep(0.02)
    assert view.toPlainText() and view.source_text() == text  # shown in part, kept whole


@pytest.mark.asyncio
@pytest.mark.parametrize("where", ["arguments", "result"])
async def test_a_tool_row_with_a_200_kb_line_expands_without_freezing(qtbot: Any, where: str) -> None:
    """A long document passed to ``construct_knowledge``, or a minified JSON result, is one huge line."""
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QPushButton

    from cks_desktop.ui.chat.model import RowState, ToolItem
    from cks_desktop.ui.chat.tool_row import ToolCallRow

    line = "<b>" + "x" * 200_000 + "</b>"
    item = ToolItem(call_id="c", name="construct_knowledge", display_name="Construct knowledge", source="builtin",
                    arguments={"text": line} if where == "arguments" else {"text": "short"})
    item.state = RowState.DONE
    item.result = line if where == "result" else "ok"
    row = ToolCallRow(item)
    qtbot.addWidget(row)
    row.resize(600, 100)
    row.show()
    async with LagProbe(f"expanding a row with a 200 kB line in its {where}"):
        await asyncio.sleep(0.02)
        row.set_expanded(True)
        await asyncio.sleep(0.02)
    copy = row.findChild(QPushButton, "toolCallArgumentsCopy" if where == "arguments" else "toolCallResultCopy")
    assert copy is not None
    copy.click()
    assert line in QGuiApplication.clipboard().text()  # the copy is the original, unbroken
