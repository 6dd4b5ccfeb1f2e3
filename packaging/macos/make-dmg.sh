#!/usr/bin/env bash
# Wraps dist/CKS Desktop.app (built by PyInstaller from packaging/cks-desktop.spec on macOS) into
# dist/cks-desktop-<version>-macos-<arch>.dmg: the app beside an Applications link, so installing
# is one drag. Unsigned: on first start macOS asks the person to confirm (README, "Install").
#   packaging/macos/make-dmg.sh VERSION
set -euo pipefail
cd "$(dirname "$0")/../.."
version=${1:?usage: make-dmg.sh VERSION}
app="dist/CKS Desktop.app"
[ -d "$app" ] || { echo "make-dmg.sh: $app not found; run pyinstaller packaging/cks-desktop.spec first" >&2; exit 1; }
stage=build/dmg
rm -rf "$stage"
mkdir -p "$stage"
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
dmg="dist/cks-desktop-$version-macos-$(uname -m).dmg"
rm -f "$dmg"
hdiutil create -volname "CKS Desktop $version" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$dmg"
echo "$dmg"
