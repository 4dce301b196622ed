#!/usr/bin/env bash
# Takes the GTKWave screenshot shown in docs/waveforms.md: runs the default scenario, opens its
# waves.gtkw in GTKWave on a virtual X display (Xvfb) and captures the window.
# usage: tools/screenshot-gtkwave.sh [OUT.png]   (default docs/img/gtkwave-default.png)
# Needs, besides what tools/setup.sh installs: xvfb, xauth, xdotool, imagemagick (installed
# here when missing, as root or through sudo; only this script uses them).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AHBM_BUILD_DIR:-$root/build}"
png="$(realpath -m "${1:-$root/docs/img/gtkwave-default.png}")"

extras=(xvfb xauth xdotool imagemagick)
missing=()
for p in "${extras[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

bash "$root/tools/build.sh"
work="$(mktemp -d)"
xvfb_pid=""; gtkwave_pid=""
cleanup() {
  [ -n "$gtkwave_pid" ] && kill "$gtkwave_pid" 2>/dev/null || true
  [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$build/bin/ahbm-sim" run "$root/traces/fanout_8x20.json" --out "$work/run" >/dev/null

# A free display number: the first without an X lock file.
display=99
while [ -e "/tmp/.X${display}-lock" ]; do display=$((display + 1)); done
Xvfb ":$display" -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 &
xvfb_pid=$!
export DISPLAY=":$display"
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done 2>/dev/null || sleep 2

# Opened from the run directory, as docs/waveforms.md tells users to: paths in waves.gtkw are relative.
(cd "$work/run" && exec gtkwave --rcvar 'splash_disable on' waves.gtkw >/dev/null 2>&1) &
gtkwave_pid=$!
win="$(xdotool search --sync --onlyvisible --name 'GTKWave' | head -1)"
xdotool windowmove "$win" 0 0 windowsize "$win" 1600 1000
sleep 3  # let GTKWave load the dump and draw
mkdir -p "$(dirname "$png")"
import -window root -crop 1600x1000+0+0 +repage -colors 32 -define png:compression-level=9 "$png"
echo "wrote $png ($(identify -format '%wx%h' "$png"))"
