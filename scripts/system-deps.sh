#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages CKS Desktop needs, and only those that are missing.
#   scripts/system-deps.sh test   - what the test suite needs (offscreen, plus one real X11 window)
#   scripts/system-deps.sh app    - plus what a real X11/Wayland window needs
set -euo pipefail
what=${1:-app}
pkgs=(python3-venv libgl1 libegl1 libfontconfig1 libxkbcommon0 libglib2.0-0 libdbus-1-3)
# the PostgreSQL server for the team-graph tests (tests/pgcluster.py starts a throw-away cluster);
# Xvfb, a D-Bus session and AT-SPI for the accessibility-tree test (tests/ui/test_accessibility_tree.py),
# which runs the real window on X11 and so needs the window's libraries too
[ "$what" = test ] && pkgs+=(postgresql xvfb dbus at-spi2-core python3-pyatspi)
if [ "$what" = app ] || [ "$what" = test ]; then
  pkgs+=(libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libxcb-randr0
         libxcb-render-util0 libxcb-image0 libxcb-xinerama0)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
command -v apt-get >/dev/null || { echo "Please install: ${missing[*]}" >&2; exit 1; }
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
