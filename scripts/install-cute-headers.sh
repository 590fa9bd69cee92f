#!/usr/bin/env bash
# Installs CUTLASS's C++ CuTe headers, and the headers they include, for the differential test of
# compiler/layout against C++ CuTe compiled with g++ on the CPU (tests/main.rs, module `cpp`). Everything comes
# from PyPI wheels, version-pinned:
#
#   nvidia-cutlass==4.2.0.0         cutlass_library/source/include/{cute,cutlass}  -> $DEST/cutlass/include
#   nvidia-cuda-cccl-cu12==12.9.27  nvidia/cuda_cccl/include/{cuda,nv,...} (libcu++) -> $DEST/cccl/include
#   nvidia-cuda-runtime==13.0.96    nvidia/cu13/include (cuda_runtime_api.h, ...)  -> $DEST/cuda/include
#   nvidia-cuda-crt==13.0.88        nvidia/cu13/include/crt (host_defines.h, ...)  -> $DEST/cuda/include
#
# The test compiles with `g++ -std=c++17 -I$DEST/cutlass/include -I$DEST/cccl/include -I$DEST/cuda/include`.
# Destination: $CUTEC_CUTE_DIR, default $HOME/.cache/cutec/cute-headers. Idempotent: nothing is downloaded when
# the pinned versions are already there.
set -euo pipefail

CUTLASS="4.2.0.0"
CCCL="12.9.27"
CUDART="13.0.96"
CRT="13.0.88"
STAMP="cutlass $CUTLASS cccl $CCCL cudart $CUDART crt $CRT"
DEST="${CUTEC_CUTE_DIR:-$HOME/.cache/cutec/cute-headers}"

if [ -f "$DEST/cutlass/include/cute/layout.hpp" ] && [ -f "$DEST/VERSION" ] && [ "$(cat "$DEST/VERSION")" = "$STAMP" ]; then
    echo "cute headers ($STAMP) already installed in $DEST"
    exit 0
fi

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

pip_download() {
    python3 -m pip download --quiet --disable-pip-version-check --no-deps "$1" -d "$TMP"
}
pip_download "nvidia-cutlass==$CUTLASS"
pip_download "nvidia-cuda-cccl-cu12==$CCCL"
pip_download "nvidia-cuda-runtime==$CUDART"
pip_download "nvidia-cuda-crt==$CRT"

rm -rf "$DEST"
mkdir -p "$DEST"
python3 - "$TMP" "$DEST" <<'PY'
import glob, os, shutil, sys, zipfile
tmp, dest = sys.argv[1], sys.argv[2]
# (wheel name prefix, folder inside the wheel, destination folder)
parts = [
    ("nvidia_cutlass-", "cutlass_library/source/include/", "cutlass/include"),
    ("nvidia_cuda_cccl_cu12-", "nvidia/cuda_cccl/include/", "cccl/include"),
    ("nvidia_cuda_runtime-", "nvidia/cu13/include/", "cuda/include"),
    ("nvidia_cuda_crt-", "nvidia/cu13/include/", "cuda/include"),
]
for prefix, inside, to in parts:
    wheels = glob.glob(os.path.join(tmp, prefix + "*.whl"))
    if len(wheels) != 1:
        sys.exit(f"expected one {prefix}*.whl in {tmp}, found {wheels}")
    n = 0
    with zipfile.ZipFile(wheels[0]) as z:
        for name in z.namelist():
            if not name.startswith(inside) or name.endswith("/"):
                continue
            target = os.path.join(dest, to, name[len(inside):])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(name) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
            n += 1
    if n == 0:
        sys.exit(f"no {inside} in {wheels[0]}")
PY
for f in cutlass/include/cute/layout.hpp cccl/include/cuda/std/type_traits cuda/include/cuda_runtime_api.h \
    cuda/include/crt/host_defines.h; do
    [ -f "$DEST/$f" ] || { echo "install-cute-headers: $DEST/$f is missing" >&2; exit 1; }
done
echo "$STAMP" > "$DEST/VERSION"
echo "cute headers ($STAMP) installed in $DEST"
