#!/usr/bin/env bash
# Installs pycute, the pure-Python reference of CuTe's layout algebra, for the differential test of
# compiler/layout (tests/main.rs, module `pycute`). pycute ships inside the `nvidia-cutlass` wheel; the PyPI
# package called `pycute` is unrelated and must not be used.
#
# Destination: $CUTEC_PYCUTE_DIR, default $HOME/.cache/cutec/pycute. The folder then holds `pycute/` (the
# package) so that `PYTHONPATH=$CUTEC_PYCUTE_DIR python3 -c 'import pycute'` works. Idempotent: nothing is
# downloaded when the package is already there.
set -euo pipefail

VERSION="4.2.0.0"
DEST="${CUTEC_PYCUTE_DIR:-$HOME/.cache/cutec/pycute}"

if [ -f "$DEST/pycute/layout.py" ] && [ -f "$DEST/VERSION" ] && [ "$(cat "$DEST/VERSION")" = "$VERSION" ]; then
    echo "pycute $VERSION already installed in $DEST"
    exit 0
fi

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

python3 -m pip download --quiet --no-deps "nvidia-cutlass==$VERSION" -d "$TMP"
WHEEL="$(ls "$TMP"/nvidia_cutlass-*.whl)"

mkdir -p "$DEST"
python3 - "$WHEEL" "$DEST" <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    members = [n for n in z.namelist() if n.startswith("pycute/")]
    if not members:
        sys.exit("no pycute/ folder in " + wheel)
    z.extractall(dest, members)
PY
echo "$VERSION" > "$DEST/VERSION"
echo "pycute $VERSION installed in $DEST"
