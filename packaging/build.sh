#!/usr/bin/env bash
# Build the Linux release of CKS Desktop from a clean virtual environment:
#   dist/cks-desktop/                                 the one-folder PyInstaller bundle
#   dist/cks-desktop-<version>-linux-x86_64.tar.gz    that bundle + desktop entry and icons
#   dist/cks-desktop_<version>_amd64.deb              installs to /opt/cks-desktop, /usr/bin/cks-desktop
# The bundle's --self-test runs offscreen in between; a non-zero exit fails the build.
#
#   packaging/build.sh            (PYTHON=python3.11 packaging/build.sh to pick the interpreter)
#
# The version comes from one place, the package metadata (pyproject.toml), read from the build venv.
# Timings and sizes go to build/build-info.txt (key=value), which the packaging test reads.
set -euo pipefail
umask 022
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python3}
PYINSTALLER_VERSION=6.22.3
APP=cks-desktop
BUILD=$ROOT/build
DIST=$ROOT/dist
VENV=$BUILD/venv
INFO=$BUILD/build-info.txt

say() { echo "build.sh: $*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

[ "$(uname -s)" = Linux ] || { say "this script builds the Linux packages; see .github/workflows/release.yml for Windows and macOS"; exit 2; }
for tool in dpkg-deb tar; do
  command -v "$tool" >/dev/null || { say "needs $tool"; exit 2; }
done
# Qt's xcb platform plugin needs these system libraries; installed here, PyInstaller bundles them too.
"$ROOT/scripts/system-deps.sh" app

start=$(now)
rm -rf "$VENV" "$BUILD/src" "$BUILD/icons" "$BUILD/pyinstaller" "$BUILD/deb" "$BUILD/tar" "$DIST/$APP"
mkdir -p "$BUILD" "$DIST"
: >"$INFO"
record() { echo "$1=$2" >>"$INFO"; }

say "1/6 clean virtual environment ($PYTHON), pip install . pyinstaller==$PYINSTALLER_VERSION"
t=$(now)
# Install from a copy of the sources, so that setuptools writes its build/ and egg-info there and
# the work tree stays as it was.
mkdir -p "$BUILD/src"
tar -c --exclude=__pycache__ --exclude='*.pyc' pyproject.toml README.md cks_desktop | tar -x -C "$BUILD/src"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$BUILD/src" "pyinstaller==$PYINSTALLER_VERSION"
VERSION=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("cks-desktop"))')
record version "$VERSION"
record venv_seconds "$(since "$t")"
say "version $VERSION"

say "2/6 icons from resources/$APP.svg"
"$VENV/bin/python" "$ROOT/scripts/render_icons.py" --out "$BUILD/icons"

say "3/6 PyInstaller"
t=$(now)
"$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN \
  --distpath "$DIST" --workpath "$BUILD/pyinstaller" "$ROOT/packaging/$APP.spec"
record pyinstaller_seconds "$(since "$t")"
record bundle_bytes "$(du -sb "$DIST/$APP" | cut -f1)"
record bundle_files "$(find "$DIST/$APP" -type f | wc -l)"

say "4/6 self-test of the bundle (offscreen)"
t=$(now)
selftest_home=$(mktemp -d)
trap 'rm -rf "$selftest_home"' EXIT
set +e
QT_QPA_PLATFORM=offscreen CKS_DESKTOP_HOME="$selftest_home" timeout 300 "$DIST/$APP/$APP" --self-test
rc=$?
set -e
record selftest_seconds "$(since "$t")"
if [ "$rc" -ne 0 ]; then
  say "FAILED: $DIST/$APP/$APP --self-test exited with $rc"
  exit 1
fi

# What the desktop needs beside the bundle: the .desktop file, hicolor icons, AppStream metadata
# (its <releases> filled in from the package version).
stage_share() {  # stage_share DIR  -> DIR/applications, DIR/icons/hicolor, DIR/metainfo
  local share=$1
  install -D -m 644 "$ROOT/resources/$APP.desktop" "$share/applications/$APP.desktop"
  mkdir -p "$share/icons"
  cp -r "$BUILD/icons/hicolor" "$share/icons/"
  local metainfo=io.github.cks_desktop.CksDesktop.metainfo.xml
  mkdir -p "$share/metainfo"
  sed "s|</component>|  <releases>\n    <release version=\"$VERSION\" date=\"$(date -u +%F)\"/>\n  </releases>\n</component>|" \
    "$ROOT/resources/$metainfo" >"$share/metainfo/$metainfo"
}

say "5/6 $APP-$VERSION-linux-x86_64.tar.gz"
t=$(now)
tarname=$APP-$VERSION-linux-x86_64
mkdir -p "$BUILD/tar/$tarname"
cp -a "$DIST/$APP/." "$BUILD/tar/$tarname/"
stage_share "$BUILD/tar/$tarname/share"
install -m 755 "$ROOT/packaging/linux/install-desktop-entry.sh" "$BUILD/tar/$tarname/"
tar -C "$BUILD/tar" --owner=0 --group=0 --numeric-owner --sort=name -czf "$DIST/$tarname.tar.gz" "$tarname"
record tarball "$DIST/$tarname.tar.gz"
record tarball_bytes "$(stat -c %s "$DIST/$tarname.tar.gz")"
record tarball_seconds "$(since "$t")"

say "6/6 .deb"
t=$(now)
# Debian orders 1.0~rc1 before 1.0, as PEP 440 orders 1.0rc1 before 1.0.
debversion=$(echo "$VERSION" | sed -E 's/\.?(a|b|rc|dev)([0-9]+)/~\1\2/g')
arch=$(dpkg --print-architecture)
root=$BUILD/deb/root
mkdir -p "$root/DEBIAN" "$root/opt" "$root/usr/bin" "$root/usr/share/doc/$APP"
cp -a "$DIST/$APP" "$root/opt/$APP"
ln -s "/opt/$APP/$APP" "$root/usr/bin/$APP"
stage_share "$root/usr/share"
install -m 644 "$ROOT/packaging/linux/copyright" "$root/usr/share/doc/$APP/copyright"
glibc=$(getconf GNU_LIBC_VERSION | awk '{print $2}')  # the bundle needs the build host's glibc or newer
sed -e "s|@VERSION@|$debversion|" -e "s|@ARCH@|$arch|" -e "s|@GLIBC@|$glibc|" \
    -e "s|@INSTALLED_SIZE@|$(du -sk --exclude=DEBIAN "$root" | cut -f1)|" \
    "$ROOT/packaging/linux/control.in" >"$root/DEBIAN/control"
deb=$DIST/${APP}_${debversion}_${arch}.deb
# xz is the compression Debian's tools all accept; level 1 (74 MB, ~40 s of CPU) instead of the default
# 6 (68 MB, ~150 s). zstd (87 MB, 2 s) is not an official .deb format (lintian: malformed-deb-archive).
dpkg-deb --root-owner-group -Zxz -z1 --build "$root" "$deb" >/dev/null
record deb "$deb"
record deb_bytes "$(stat -c %s "$deb")"
record deb_seconds "$(since "$t")"
record total_seconds "$(since "$start")"

say "done in $(since "$start") s:"
du -sh "$DIST/$APP" "$DIST/$tarname.tar.gz" "$deb" >&2
