#!/usr/bin/env bash
# Speed of the exact serve mode (every step simulated, no step cache): LLaMA-3-8B as a whole
# model serving the first COUNT conversations of the Azure LLM inference trace (2023), FCFS.
# Prints the steps simulated, the process's CPU seconds (user + sys), CPU per step and steps per
# simulated second (summary.json: steps.count over throughput.span_ns). No build: it times the
# binary as it is (build it with tools/build.sh ahbm-sim).
#
#   tools/bench-serve-exact.sh [COUNT] [REPEATS]   COUNT requests (default 100), REPEATS runs (default 1)
#   AHBM_SIM=path/to/ahbm-sim   the binary (default: $AHBM_BUILD_DIR/bin or build/bin)
#   AZURE_CONV_CSV=path         the trace's conv.csv (default: the shipped traces/data/azure-llm-2023/conv.csv)
set -euo pipefail
usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
count="${1:-100}" repeats="${2:-1}"
[[ $count =~ ^[1-9][0-9]*$ && $repeats =~ ^[1-9][0-9]*$ ]] || { usage >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sim="${AHBM_SIM:-${AHBM_BUILD_DIR:-$root/build}/bin/ahbm-sim}"
csv="${AZURE_CONV_CSV:-$root/traces/data/azure-llm-2023/conv.csv}"
[ -x "$sim" ] || { echo "bench-serve-exact: no binary at $sim (tools/build.sh ahbm-sim)" >&2; exit 2; }
[ -f "$csv" ] || { echo "bench-serve-exact: no trace at $csv (set AZURE_CONV_CSV)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat >"$work/conv.json" <<JSON
{"name": "conv", "scenario": "$root/traces/llama3_8b.json",
 "arrival": {"process": "azure_csv", "file": "$csv", "count": $count},
 "scheduler": {"policy": "fcfs", "step_cache": false},
 "slo": {"ttft_ns": 2000000000, "tpot_ns": 200000000}}
JSON
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
printf '%-4s %8s %12s %14s %18s\n' run steps cpu_s cpu_s_per_step steps_per_sim_s
for ((i = 1; i <= repeats; ++i)); do
  rm -rf "$work/out"
  /usr/bin/time -f '%U %S' -o "$work/time" "$sim" serve "$work/conv.json" --out "$work/out" >"$work/stdout" 2>"$work/stderr" ||
    { cat "$work/stderr" >&2; exit 1; }
  /usr/bin/python3 - "$i" "$work/time" "$work/out/summary.json" <<'PY'
import json, sys
run, time_file, summary = sys.argv[1:]
user, sys_s = (float(x) for x in open(time_file).read().split()[-2:])
s = json.load(open(summary))
steps = s["steps"]["count"]
span_s = s["throughput"]["span_ns"] * 1e-9
cpu = user + sys_s
print(f"{run:<4} {steps:8d} {cpu:12.2f} {cpu / steps:14.4f} {steps / span_s:18.3f}")
PY
done
