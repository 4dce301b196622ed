#!/usr/bin/env bash
# The installable package (cmake/install.cmake, docs/embedding.md), as a user of it would see it:
# installs the build tree into a fresh prefix, builds examples/embed -- a SystemC platform of its
# own with ahbm's chip inside -- against it through find_package(ahbm CONFIG) alone, runs it, and
# checks its results: O against its own float64 reference and a TLM read of a PE's HBM slice
# (the program prints PASS only when both match). Also runs the installed CLI.
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
# The installed CLI is the built one.
step version-installed "$work/prefix/bin/ahbm-sim" --version
step version-built "$build/bin/ahbm-sim" --version
cmp -s "$work/version-installed.log" "$work/version-built.log" || {
  echo "embed_package_test: installed ahbm-sim --version differs from the build's" >&2
  exit 1
}

args=(-S "$src/examples/embed" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_COMPILER="$cxx"
  -DCMAKE_BUILD_TYPE=Release)
[ -n "$launcher" ] && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher")
step configure cmake "${args[@]}"
step build cmake --build "$work/build"
step run env SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$work/build/embed_platform"
cat "$work/run.log"
grep -qx PASS "$work/run.log" || { echo "embed_package_test: the platform did not print PASS" >&2; exit 1; }

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
