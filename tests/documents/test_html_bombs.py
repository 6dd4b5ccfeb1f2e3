"""An HTML file whose tag or attribute never ends is refused in one sentence, in little memory,
with nothing added: the parser is fed a piece at a time and what it holds back is bounded. Each
file is read in a fresh process so that its peak memory (VmHWM) is its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_cli import cks, home, ok  # noqa: F401  (home is a fixture)

from .test_zip_bombs import _read

HEAD = b'<html><head><title>T</title></head><body><p>Hello there.</p><img alt="'
SENTENCE = ("has a tag, attribute, comment or script that does not end within 16 million characters; "
            "it is refused as unsafe (save the page as text or PDF to add it).")


def _endless(path: Path, megabytes: int, opening: bytes = HEAD, filler: bytes = b"a") -> Path:
    piece = filler * (1_000_000 // len(filler))
    with path.open("wb") as handle:
        handle.write(opening)
        for _ in range(megabytes):
            handle.write(piece)
    return path


@pytest.mark.parametrize("megabytes", [21, 200])
def test_an_attribute_that_never_ends_is_one_sentence_in_little_memory(tmp_path: Path, megabytes: int) -> None:
    seen = _read(_endless(tmp_path / "page.html", megabytes))
    assert seen["outcome"] == f"page.html {SENTENCE}", seen  # was read whole as text: 200 MB at 1.5 GB peak
    assert seen["peak_mb"] < 1024, seen


@pytest.mark.slow
def test_a_tag_that_never_ends_is_refused_and_nothing_is_added(home: Path, tmp_path: Path) -> None:
    page = _endless(tmp_path / "tag.html", 21, b"<html><body><p>Hi</p><div ", b" x=y")
    sid = ok(cks(home, "sessions", "create", "Docs")).strip()
    out = cks(home, "documents", "add", "--session", sid, str(page))
    assert out.returncode != 0 and out.stderr.strip() == f"cks-desktop: tag.html {SENTENCE}", out.stderr
    assert ok(cks(home, "documents", "list", "--session", sid, "--json")).count('"id"') == 0


def test_a_page_with_a_big_inline_image_is_still_read(tmp_path: Path) -> None:
    page = tmp_path / "saved.html"
    page.write_bytes(b'<html><body><p>Before</p><img src="data:image/png;base64,' + b"A" * 10_000_000
                     + b'"><p>After the picture.</p></body></html>')
    seen = _read(page)
    assert seen["outcome"] == f"added: {len('Before' + chr(10) + chr(10) + 'After the picture.')}", seen
