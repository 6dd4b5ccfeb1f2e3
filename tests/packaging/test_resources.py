"""The icon renderer and the desktop-integration files, without building anything (fast).

The .ico and .icns containers are written by scripts/render_icons.py itself, so they are read back
here with independent readers: Qt's ICO plugin decodes every frame, and the ICNS structure is walked
by hand (macOS is not here to open it).
"""

from __future__ import annotations

import importlib.util
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
from configparser import ConfigParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESOURCES = ROOT / "resources"
ICON_SVG = ROOT / "cks_desktop" / "resources" / "cks-desktop.svg"
APP_ID = "io.github.cks_desktop.CksDesktop"


def _render_icons_module():
    spec = importlib.util.spec_from_file_location("render_icons", ROOT / "scripts" / "render_icons.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def icons(qapp, tmp_path_factory: pytest.TempPathFactory) -> Path:
    # qapp first: the renderer would otherwise create a QGuiApplication, and the widget tests that
    # run later in the same process need the one instance to be a QApplication.
    out = tmp_path_factory.mktemp("icons")
    _render_icons_module().render(ICON_SVG, out)
    return out


def test_hicolor_pngs_have_their_sizes(icons: Path) -> None:
    from PySide6.QtGui import QImage

    for size in (16, 22, 24, 32, 48, 64, 128, 256, 512):
        image = QImage(str(icons / "hicolor" / f"{size}x{size}" / "apps" / "cks-desktop.png"))
        assert (image.width(), image.height()) == (size, size)
        assert image.hasAlphaChannel() and image.pixelColor(0, 0).alpha() == 0  # rounded corners
        assert image.pixelColor(size // 2, size // 2).alpha() == 255
    assert (icons / "hicolor" / "scalable" / "apps" / "cks-desktop.svg").read_bytes() == \
        (ICON_SVG).read_bytes()


def test_ico_frames_decode_with_qt(icons: Path) -> None:
    from PySide6.QtGui import QImageReader

    data = (icons / "cks-desktop.ico").read_bytes()
    reserved, kind, count = struct.unpack_from("<HHH", data)
    assert (reserved, kind) == (0, 1)
    reader = QImageReader(str(icons / "cks-desktop.ico"))
    sizes = []
    for i in range(count):
        assert reader.jumpToImage(i)
        image = reader.read()
        assert not image.isNull(), reader.errorString()
        assert image.pixelColor(image.width() // 2, image.height() // 2).alpha() == 255
        assert image.pixelColor(0, 0).alpha() == 0
        sizes.append(image.width())
    assert {16, 32, 48, 256} <= set(sizes)


def test_icns_structure(icons: Path) -> None:
    data = (icons / "cks-desktop.icns").read_bytes()
    assert data[:4] == b"icns" and struct.unpack_from(">I", data, 4)[0] == len(data)
    offset, types = 8, {}
    while offset < len(data):
        ostype, length = data[offset:offset + 4], struct.unpack_from(">I", data, offset + 4)[0]
        assert data[offset + 8:offset + 16] == b"\x89PNG\r\n\x1a\n"
        types[ostype] = struct.unpack_from(">I", data, offset + 8 + 16)[0]  # the PNG's IHDR width
        offset += length
    assert offset == len(data)
    assert types[b"icp4"] == 16 and types[b"ic07"] == 128 and types[b"ic10"] == 1024


def test_desktop_file() -> None:
    entry = ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(RESOURCES / "cks-desktop.desktop", encoding="utf-8")
    section = entry["Desktop Entry"]
    assert (section["Exec"], section["Icon"], section["StartupWMClass"]) == ("cks-desktop",) * 3
    assert section["Type"] == "Application" and section["Terminal"] == "false"
    if shutil.which("desktop-file-validate"):
        subprocess.run(["desktop-file-validate", str(RESOURCES / "cks-desktop.desktop")], check=True)


def test_appstream_metainfo() -> None:
    path = RESOURCES / f"{APP_ID}.metainfo.xml"
    root = ET.parse(path).getroot()
    assert root.findtext("id") == APP_ID
    assert root.find("launchable").text == "cks-desktop.desktop"  # type: ignore[union-attr]
    assert root.findtext("project_license") == "GPL-3.0-or-later"
    assert root.find("releases") is None  # packaging/build.sh adds it from the package version
    if shutil.which("appstreamcli"):
        subprocess.run(["appstreamcli", "validate", "--no-net", str(path)], check=True, capture_output=True)


def test_the_app_id_is_the_same_everywhere() -> None:
    import plistlib

    plist = plistlib.loads((ROOT / "packaging" / "macos" / "Info.plist").read_bytes())
    assert plist["CFBundleIdentifier"] == APP_ID
    assert f'BUNDLE_ID = "{APP_ID}"' in (ROOT / "packaging" / "cks-desktop.spec").read_text()
