#!/usr/bin/env bash
# The test job: set up, build, and run every test through CTest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AHBM_BUILD_DIR:-$root/build}"
bash "$root/tools/build.sh"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
