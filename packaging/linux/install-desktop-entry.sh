#!/bin/sh
# Adds CKS Desktop from this unpacked folder to your application menu (for you only; no root):
# the .desktop file goes to ~/.local/share/applications, the icons to ~/.local/share/icons/hicolor.
#   ./install-desktop-entry.sh            install (run it again after moving this folder)
#   ./install-desktop-entry.sh --remove   remove them again
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
entry=$data/applications/cks-desktop.desktop
if [ "${1:-}" = --remove ]; then
  rm -f "$entry"
  find "$data/icons/hicolor" -name 'cks-desktop.*' -path '*/apps/*' -delete 2>/dev/null || true
  echo "Removed the CKS Desktop menu entry."
  exit 0
fi
mkdir -p "$data/applications" "$data/icons"
cp -r "$here/share/icons/hicolor" "$data/icons/"
sed -e "s|^Exec=.*|Exec=\"$here/cks-desktop\"|" -e "s|^TryExec=.*|TryExec=$here/cks-desktop|" \
  "$here/share/applications/cks-desktop.desktop" >"$entry"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$data/applications" || true
echo "Added CKS Desktop to your application menu ($entry)."
