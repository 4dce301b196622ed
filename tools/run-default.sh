#!/usr/bin/env bash
# The main job: set up, build, and run the default scenario (8 sub-agents x 20 new tokens over an
# 8192-token shared prefix on one KV head = 4 CUBEs x 8 PEs). Outputs go to out/fanout_8x20/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AHBM_BUILD_DIR:-$root/build}"
bash "$root/tools/build.sh" ahbm-sim  # only what this script runs, not the test suite
out="${1:-$root/out/fanout_8x20}"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
"$build/bin/ahbm-sim" run "$root/traces/fanout_8x20.json" --out "$out"
echo "outputs:"
for f in summary.json latency.csv trace.json stats.json waves.vcd waves.gtkw; do echo "  $out/$f"; done
echo "waveform: gtkwave $out/waves.gtkw    trace: open $out/trace.json in the Perfetto UI    plots: tools/plot $out"
