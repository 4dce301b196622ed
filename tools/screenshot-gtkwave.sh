#!/usr/bin/env bash
# Takes the GTKWave screenshot shown in docs/waveforms.md: runs the default scenario into
# out/fanout_8x20 (as tools/run-default.sh does) under a temporary directory, opens it from there
# in GTKWave on a virtual X display (Xvfb) and captures the window. The dump is named on the
# command line, so the title bar reads "out/fanout_8x20/waves.vcd", not the temporary path. The
# PNG's comment (a tEXt chunk) records the run it shows ("ahbm-sim run traces/fanout_8x20.json:
# total_ns=... q_tile_rows=... q_tiles=..."); tools/docs-numbers (test DocsNumbers.*) compares
# it with a fresh run, so a screenshot of an older model fails the tests until retaken.
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

run="$work/out/fanout_8x20"
SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$build/bin/ahbm-sim" run "$root/traces/fanout_8x20.json" --out "$run" >/dev/null
comment="$(/usr/bin/python3 "$root/tools/docs-numbers" --screenshot-comment "$run/summary.json")"

# A free display number: the first without an X lock file.
display=99
while [ -e "/tmp/.X${display}-lock" ]; do display=$((display + 1)); done
Xvfb ":$display" -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 &
xvfb_pid=$!
export DISPLAY=":$display"
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done 2>/dev/null || sleep 2

# Opened from the directory holding out/, the dump named before the save file (whose paths are
# relative to itself): GTKWave titles the window with the dump's path as given.
(cd "$work" && exec gtkwave --rcvar 'splash_disable on' out/fanout_8x20/waves.vcd out/fanout_8x20/waves.gtkw >/dev/null 2>&1) &
gtkwave_pid=$!
win="$(xdotool search --sync --onlyvisible --name 'GTKWave' | head -1)"
xdotool windowmove "$win" 0 0 windowsize "$win" 1600 1000
sleep 3  # let GTKWave load the dump and draw
mkdir -p "$(dirname "$png")"
title="$(xdotool getwindowname "$win")"
[ "$title" = "GTKWave - out/fanout_8x20/waves.vcd" ] || { echo "screenshot-gtkwave: the title bar reads \"$title\"" >&2; exit 1; }
import -window root -crop 1600x1000+0+0 +repage -colors 32 -define png:compression-level=9 \
  -define png:exclude-chunks=date,time -set comment "$comment" "$png"
echo "wrote $png ($(identify -format '%wx%h' "$png"); $comment)"
