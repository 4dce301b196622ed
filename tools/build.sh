#!/usr/bin/env bash
# Set-up (missing Debian packages), configure and build into build/ (or $AHBM_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AHBM_BUILD_DIR:-$root/build}"
bash "$root/tools/setup.sh"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${AHBM_CMAKE_ARGS:-} >/dev/null
fi
cmake --build "$build" -j "$(nproc)" -- --no-print-directory >&2
