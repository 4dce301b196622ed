#!/usr/bin/env bash
# The installable package (cmake/install.cmake, docs/embedding.md), as a user of it would see it:
# installs the build tree into a fresh prefix, builds examples/embed -- a SystemC platform of its
# own with ahbm's chip inside -- against it through find_package(ahbm CONFIG) alone, runs it, and
# checks its results: O against its own float64 reference and a TLM read of a PE's HBM slice
# (the program prints PASS only when both match) and compares its output with docs/embedding.md.
# Also checks every file under traces/ is installed, and runs the installed CLI (--version, and
# serve of the installed traces/serve/azure_sample.json, which reads its CSV).
#   embed_package_test.sh BUILD_DIR SOURCE_DIR CXX_COMPILER [COMPILER_LAUNCHER]
set -euo pipefail
build=$1 src=$2 cxx=$3 launcher=${4:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/ahbm-embed.XXXXXX")
trap 'rm -rf "$work"' EXIT

step() {  # name, command...: runs the command with its output in a log, shown on failure
  local name=$1
  shift
  if ! "$@" >"$work/$name.log" 2>&1; then
    echo "embed_package_test: $name failed: $*" >&2
    cat "$work/$name.log" >&2
    exit 1
  fi
}

step install cmake --install "$build" --prefix "$work/prefix"
for f in lib/cmake/ahbm/ahbmConfig.cmake lib/cmake/ahbm/ahbmConfigVersion.cmake include/ahbm/hw/chip/chip.h \
  include/ahbm/runtime/io/version.h share/ahbm/hw-configs/default.json share/ahbm/traces/fanout_8x20.json bin/ahbm-sim; do
  [ -e "$work/prefix/$f" ] || { echo "embed_package_test: $f is not installed" >&2; exit 1; }
done
# Every shipped scenario, workload and data file is installed (a workload names its CSV beside it).
while IFS= read -r f; do
  rel=${f#"$src/traces/"}
  [ -e "$work/prefix/share/ahbm/traces/$rel" ] || { echo "embed_package_test: traces/$rel is not installed" >&2; exit 1; }
done < <(find "$src/traces" -type f)
# The installed CLI is the built one.
step version-installed "$work/prefix/bin/ahbm-sim" --version
step version-built "$build/bin/ahbm-sim" --version
cmp -s "$work/version-installed.log" "$work/version-built.log" || {
  echo "embed_package_test: installed ahbm-sim --version differs from the build's" >&2
  exit 1
}

# The installed Azure-trace workload runs from the installed tree (its CSV and scenario resolved beside it).
mkdir -p "$work/elsewhere"
step serve-installed env -C "$work/elsewhere" SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$work/prefix/bin/ahbm-sim" serve \
  "$work/prefix/share/ahbm/traces/serve/azure_sample.json" --out "$work/elsewhere/az"
[ -s "$work/elsewhere/az/requests.csv" ] || { echo "embed_package_test: installed azure_sample.json wrote no requests.csv" >&2; exit 1; }

args=(-S "$src/examples/embed" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_COMPILER="$cxx"
  -DCMAKE_BUILD_TYPE=Release)
[ -n "$launcher" ] && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher")
step configure cmake "${args[@]}"
step build cmake --build "$work/build"
step run env SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$work/build/embed_platform"
cat "$work/run.log"
grep -qx PASS "$work/run.log" || { echo "embed_package_test: the platform did not print PASS" >&2; exit 1; }
# docs/embedding.md quotes what it prints: the same lines, the error's order of magnitude (its digits
# follow the BLAS kernel).
/usr/bin/python3 - "$src/docs/embedding.md" "$work/run.log" <<'PY' || exit 1
import re, sys
doc, out = open(sys.argv[1], encoding="utf-8").read(), open(sys.argv[2]).read().splitlines()
m = re.search(r"\n```\n(O back at the host:.*?)\n```", doc, re.S)
if not m:
    sys.exit("embed_package_test: docs/embedding.md has no ``` block starting 'O back at the host:'")
quoted = m.group(1).splitlines()
err = re.compile(r"(max \|O - float64 reference\| = )\d\.\d+e([-+]\d+)$")
bad = []
if len(quoted) != len(out):
    bad.append(f"{len(quoted)} lines quoted, {len(out)} printed")
for q, o in zip(quoted, out):
    if err.match(q) and err.match(o):
        if err.match(q).group(2) != err.match(o).group(2):
            bad.append(f"doc: {q!r}, printed: {o!r} (another order of magnitude)")
    elif q != o:
        bad.append(f"doc: {q!r}, printed: {o!r}")
if bad:
    sys.exit("embed_package_test: docs/embedding.md's output block differs from the program's:\n  " + "\n  ".join(bad))
PY

# A consumer asking for another minor version is refused (SameMinorVersion: 0.x may change the API).
mkdir -p "$work/wrong-version"
cat >"$work/wrong-version/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.22)
project(wrong_version LANGUAGES CXX)
find_package(ahbm 0.1 CONFIG REQUIRED)
CMAKE
if cmake -S "$work/wrong-version" -B "$work/wrong-version/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  >"$work/wrong.log" 2>&1; then
  echo "embed_package_test: find_package(ahbm 0.1) accepted version $(grep -o 'ahbm_sim VERSION [0-9.]*' "$src/CMakeLists.txt")" >&2
  exit 1
fi
grep -q "compatible with requested version \"0.1\"" <(tr -s " \n" " " <"$work/wrong.log") || { cat "$work/wrong.log" >&2; exit 1; }
echo "embed_package_test: ok"
