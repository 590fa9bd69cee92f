# Sourced by the one-call GPU scripts (table_run.sh, splitk_run.sh) from scripts/gpu on the GPU machine: GPU_DIR
# (default ../../.gpu) with `cutec` unpacked from `cutec.gz` if needed, the release wheel of the Python package
# installed into a fresh folder on PYTHONPATH, unbuffered Python, and the GPU's name and clocks printed.
export GPU_DIR=${GPU_DIR:-../../.gpu} PYTHONUNBUFFERED=1
if [ ! -x "$GPU_DIR/cutec" ] && [ -f "$GPU_DIR/cutec.gz" ]; then
    gunzip -c "$GPU_DIR/cutec.gz" > "$GPU_DIR/cutec" && chmod +x "$GPU_DIR/cutec"
fi
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" "$GPU_DIR"/cutec-*.whl 2>&1 | grep -v WARNING
export PYTHONPATH="$site"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
