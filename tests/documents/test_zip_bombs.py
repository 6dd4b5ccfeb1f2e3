"""A Word file that unpacks to far more than it weighs is refused in one sentence, in little
memory and time, before python-docx parses it: the archive's declared sizes are never trusted (a
member that lies about its size is inflated and counted like any other). Each file is read in a
fresh process so that its peak memory is its own."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import zipfile
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
HEAD = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document '
        b'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>')
PARAGRAPH = b"<w:p><w:r><w:t>a</w:t></w:r></w:p>"
TAIL = b"</w:body></w:document>"
TYPES = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
         'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
         'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/'
         'document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+'
         'xml"/></Types>')
RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
        '2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/officeDocument" Target="word/document.xml"/></Relationships>')

READ = """
import json, sys, time
from pathlib import Path
from cks_desktop.documents.errors import UnreadableDocument
from cks_desktop.documents.readers import read_path
started = time.monotonic()
try:
    outcome = "added: " + str(len(read_path(Path(sys.argv[1]), 10**9).text))
except UnreadableDocument as exc:
    outcome = str(exc)
# VmHWM is this program's own peak (ru_maxrss keeps the forking parent's size across exec)
peak_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"outcome": outcome, "seconds": time.monotonic() - started, "peak_mb": peak_kb // 1024}))
"""


def _docx(path: Path, megabytes: int) -> Path:
    """A valid .docx whose document.xml inflates to ``megabytes`` MB of tiny paragraphs."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", TYPES)
        archive.writestr("_rels/.rels", RELS)
        with archive.open("word/document.xml", "w") as member:
            member.write(HEAD)
            piece = PARAGRAPH * 30_000
            for _ in range(max(1, megabytes * 1_000_000 // len(piece))):
                member.write(piece)
            member.write(TAIL)
    return path


def _declare(path: Path, member: str, size: int) -> None:
    """Make the archive lie: ``member``'s uncompressed size is written as ``size`` in both headers."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    for signature, size_at, name_at in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
        start = 0
        while (at := data.find(signature, start)) >= 0:
            if data[at + name_at:at + name_at + len(name)] == name:
                data[at + size_at:at + size_at + 4] = struct.pack("<I", size)
            start = at + 4
    path.write_bytes(bytes(data))


def _read(path: Path) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", READ, str(path)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0 and not out.stderr.strip(), out.stderr[-2000:]
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_markup_that_unpacks_to_a_hundred_megabytes_is_refused_at_once(tmp_path: Path) -> None:
    bomb = _docx(tmp_path / "report.docx", 100)  # ~300 KB on disk
    assert bomb.stat().st_size < 1_000_000
    seen = _read(bomb)
    assert seen["outcome"] == ("report.docx unpacks to more than 40 MB of Word markup; it is refused as unsafe "
                               "(save it as PDF, or split it, to add it).")
    assert seen["peak_mb"] < 300 and seen["seconds"] < 30, seen  # was 1.8 GB and 210 s


def test_a_member_that_lies_about_its_size_is_counted_as_it_inflates(tmp_path: Path) -> None:
    bomb = _docx(tmp_path / "small.docx", 100)
    _declare(bomb, "word/document.xml", 1024)  # "1 KB", inflating to 100 MB
    seen = _read(bomb)
    assert str(seen["outcome"]).startswith("small.docx "), seen
    assert "added" not in str(seen["outcome"]) and seen["peak_mb"] < 300, seen


def test_an_ordinary_word_file_is_still_read(tmp_path: Path) -> None:
    seen = _read(_docx(tmp_path / "notes.docx", 1))
    assert str(seen["outcome"]).startswith("added: "), seen


def test_the_budget_is_below_what_the_reader_can_afford() -> None:
    from cks_desktop.documents.readers.docx_reader import MAX_INFLATED, MAX_MARKUP

    gigabyte = 1024 ** 3  # lxml and python-docx take about 18x the markup they parse
    assert MAX_MARKUP * 18 < gigabyte and MAX_INFLATED <= gigabyte // 2
