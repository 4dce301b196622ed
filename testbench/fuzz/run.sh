#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang) and runs them within a time budget.
#   usage: testbench/fuzz/run.sh [SECONDS=60]      (SECONDS shared by the four harnesses)
# Seeds: traces/*.json (scenarios), hw/configs/*.json (hardware configs, default.json sets every
# parameter) and testbench/fuzz/corpus/ (a unit test checks that the seeds cover every parameter).
# Inputs that once crashed a parser live in testbench/fuzz/regressions/ and are replayed first
# (the unit tests replay them too). A crash leaves its input in $build/artifacts/ and fails here:
# add that file to testbench/fuzz/regressions/<hw|scenario>/ once fixed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${AHBM_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${1:-60}"
per=$(( seconds / 4 ))

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root/testbench/fuzz" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j "$(nproc)" -- --no-print-directory >&2
mkdir -p "$build/artifacts"
# The dictionary: json.dict plus every hardware-config key of the generated schema.
/usr/bin/python3 "$root/testbench/fuzz/dict_from_schema.py" "$root" >"$build/json.dict"

fuzz() {  # harness, regression folder, seed folders...
  local harness=$1 regressions=$2
  shift 2
  local corpus="$build/corpus/$harness"
  mkdir -p "$corpus"
  local seeds=()
  for d in "$@"; do [ -d "$d" ] && seeds+=("$d"); done
  if compgen -G "$regressions/*" >/dev/null; then
    "$build/$harness" "$regressions"/* >"$build/$harness.replay.log" 2>&1 || {
      tail -40 "$build/$harness.replay.log" >&2
      echo "fuzz: $harness fails on a regression input in $regressions" >&2
      exit 1
    }
    echo "== $harness: $(grep -c '^Executed' "$build/$harness.replay.log") regression inputs replayed" >&2
  fi
  echo "== $harness: fuzzing for ${per} s" >&2
  "$build/$harness" "$corpus" "${seeds[@]}" -max_total_time="$per" -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048 -dict="$build/json.dict" -artifact_prefix="$build/artifacts/" \
    -print_final_stats=1 >"$build/$harness.log" 2>&1 || {
    tail -40 "$build/$harness.log" >&2
    echo "fuzz: $harness found a failure; input saved in $build/artifacts/" >&2
    exit 1
  }
  grep -E "^Done [0-9]+ runs|^stat::(new_units_added|peak_rss_mb)" "$build/$harness.log" | sed "s/^/  $harness: /" >&2
}

fuzz fuzz_hw_config "$root/testbench/fuzz/regressions/hw" "$root/testbench/fuzz/corpus/hw" "$root/hw/configs"
fuzz fuzz_scenario "$root/testbench/fuzz/regressions/scenario" "$root/testbench/fuzz/corpus/scenario" "$root/traces"
fuzz fuzz_azure_csv "$root/testbench/fuzz/regressions/azure_csv" "$root/testbench/fuzz/corpus/azure_csv"
fuzz fuzz_booksim_config "$root/testbench/fuzz/regressions/booksim" "$root/testbench/fuzz/corpus/booksim"
echo "fuzz: no failure in ${seconds} s" >&2
