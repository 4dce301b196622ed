#!/usr/bin/env bash
# The test job: set up, build, and run the tests through CTest. With no argument every test
# runs; `--label L` (or ctest's own `-L L`) runs one label of testbench/CMakeLists.txt:
#   unit          one function, class or module on its own; fast (seconds)
#   integration   whole simulations in-process (scenarios, NoC load curves)
#   e2e           the ahbm-sim binary and the Python tools, run as a user would
# Any other argument goes to ctest unchanged (e.g. -R NocLoad, --repeat until-fail:3).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AHBM_BUILD_DIR:-$root/build}"
labels="unit integration e2e"

ctest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --label | --label=*)
      if [ "$1" = --label ]; then
        label="${2:-}"
        shift $(($# >= 2 ? 2 : 1))
      else
        label="${1#--label=}"
        shift
      fi
      if [[ " $labels " != *" $label "* ]]; then
        echo "tools/test.sh: --label '$label' is not a test label (allowed: ${labels// /, })" >&2
        exit 2
      fi
      ctest_args+=(-L "^$label\$")
      ;;
    *)
      ctest_args+=("$1")
      shift
      ;;
  esac
done

bash "$root/tools/build.sh"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "${ctest_args[@]}"
