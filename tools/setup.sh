#!/usr/bin/env bash
# Installs the Debian 12 packages ahbm-sim needs, only those that are missing.
# Idempotent and non-interactive; runs apt-get as root, through sudo otherwise.
set -euo pipefail

PACKAGES=(
  g++ cmake make pkg-config        # toolchain
  libsystemc-dev                   # SystemC 2.3.4 + TLM-2.0 (Accellera)
  nlohmann-json3-dev               # JSON configs and outputs
  libeigen3-dev                    # vectorised block numerics
  libboost-program-options-dev     # command line
  zlib1g-dev                       # trace.json.gz
  libssl-dev                       # libcrypto: SHA-256 of the config in summary.json
  googletest libgtest-dev          # unit and integration tests
  libbenchmark-dev libopenblas-dev # benchmarks; OpenBLAS is the host-arithmetic bound
  gtkwave                          # waveform viewer; its vcd2fst validates our VCD in tests
  python3-numpy python3-matplotlib # tools/plot and .npy checks (run with /usr/bin/python3)
  clang libclang-rt-14-dev         # libFuzzer harnesses (testbench/fuzz); libclang_rt.fuzzer lives in -rt-14-dev
  slurm-wlm munge                  # tools/sweep --executor slurm; the e2e test starts a one-node cluster
  python3-jsonschema               # checks the generated hardware-config JSON Schema (CTest)
  python3-dev pybind11-dev         # the Python module ahbm (tools/python, docs/python.md)
  python3-pandas                   # DataFrames of the module's spans (tests, example notebook)
  jupyter-nbconvert python3-ipykernel  # executes examples/notebook/*.ipynb in the tests
  python3-venv python3-setuptools python3-wheel  # `pip install .` of the package ahbm in a venv (docs/python.md)
  mypy                             # checks the package's stubs on the notebook's code (CTest)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
echo "setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
