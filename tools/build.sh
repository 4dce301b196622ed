#!/usr/bin/env bash
# Set-up (missing Debian packages), configure and build into build/ (or $AHBM_BUILD_DIR).
#   tools/build.sh [TARGET...]   builds only the named targets (e.g. ahbm-sim); all without.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AHBM_BUILD_DIR:-$root/build}"
bash "$root/tools/setup.sh"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${AHBM_CMAKE_ARGS:-} >/dev/null
fi
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j "$(nproc)" "${targets[@]}" -- --no-print-directory >&2
