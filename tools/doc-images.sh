#!/usr/bin/env bash
# Regenerates the images of docs/outputs.md, docs/energy.md and docs/waveforms.md under docs/img/: the plots of
# the default scenario (tools/plot), the curves of tools/sweep-example.json, and the GTKWave
# screenshot (tools/screenshot-gtkwave.sh). PNGs are re-quantised with ImageMagick when present.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AHBM_BUILD_DIR:-$root/build}"
img="$root/docs/img"
bash "$root/tools/build.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
"$build/bin/ahbm-sim" run "$root/traces/fanout_8x20.json" --out "$work/run" >/dev/null
mkdir -p "$img"
/usr/bin/python3 "$root/tools/plot" "$work/run" --out "$work/plots" >/dev/null
cp "$work/plots/"*.png "$img/"  # the images only (the breakdown's CSV stays out of docs/)
/usr/bin/python3 "$root/tools/sweep" "$root/tools/sweep-example.json" --out "$work/sweep" --cli "$build/bin/ahbm-sim"
/usr/bin/python3 "$root/tools/plot" --sweep "$work/sweep/results.csv" --x scenario.shared_prefix_tokens --out "$img" >/dev/null
if command -v convert >/dev/null; then
  for f in latency_breakdown pe_gantt utilisation sweep power; do
    convert "$img/$f.png" -colors 64 -define png:compression-level=9 "$img/$f.png"
  done
fi
bash "$root/tools/screenshot-gtkwave.sh" "$img/gtkwave-default.png"
ls -l "$img"
