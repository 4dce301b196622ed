#!/usr/bin/env bash
# Regenerates the images of docs/outputs.md, docs/energy.md, docs/serving.md and docs/waveforms.md
# under docs/img/: the plots of the default scenario (tools/plot, power.png included), the curves
# of tools/sweep-example.json, the serve rate sweep of tools/sweep-serve-example.json and one serve
# run's plots, and the GTKWave
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
# The rate sweep of docs/serving.md (14 serve points, a few minutes) and the plots of its
# 1000/s FCFS point (p0008).
/usr/bin/python3 "$root/tools/sweep" "$root/tools/sweep-serve-example.json" --out "$work/serve-sweep" \
  --cli "$build/bin/ahbm-sim"
/usr/bin/python3 "$root/tools/plot" --sweep "$work/serve-sweep/results.csv" --out "$img" >/dev/null
/usr/bin/python3 "$root/tools/plot" "$work/serve-sweep/points/p0008/run" --out "$work/serve-plots" >/dev/null
cp "$work/serve-plots/serve_timeline.png" "$work/serve-plots/serve_latency_cdf.png" "$img/"
if command -v convert >/dev/null; then
  for f in latency_breakdown pe_gantt utilisation sweep power serve_sweep serve_timeline serve_latency_cdf; do
    convert "$img/$f.png" -colors 64 -define png:compression-level=9 "$img/$f.png"
  done
fi
bash "$root/tools/screenshot-gtkwave.sh" "$img/gtkwave-default.png"
ls -l "$img"
