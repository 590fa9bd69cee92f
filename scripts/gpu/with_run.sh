#!/usr/bin/env bash
# One GPU call for `store(.., map = f, with = x)`: the register path bit for bit (map_check.py), the TMA epilogue
# with the bias read by the spare warps (examples/gemm_epilogue.cute) correct on ragged shapes, clean under
# compute-sanitizer and timed against the plain GEMM, against the example as it was before `with` (the bias added
# in the consumers' registers, scripts/gpu/gemm_epilogue_registers.cute) and with 192-column tiles (the pieces
# of a row that the consumers' 128 threads do not divide); then the epilogue's parts (epilogue_variants.py).
# Needs what scripts/gpu/build.sh writes in $GPU_DIR. Run from scripts/gpu on the GPU machine:
#   GPU_DIR=../../.gpus bash with_run.sh
set -u
cd "$(dirname "$0")"
. ./gpu_env.sh
status=0
timeout 90 python3 map_check.py || status=1
echo "== map_check.py done after ${SECONDS}s"
timeout 330 python3 epilogue_overlap_check.py --rounds 5 --sanitize \
    --also gemm_epilogue_registers:gemm_bias_gelu:registers --also gemm_epilogue_bn192:gemm_bias_gelu:BN=192 \
    || status=1
echo "== epilogue_overlap_check.py done after ${SECONDS}s"
timeout 150 python3 epilogue_variants.py --also gemm_epilogue_registers:gemm_bias_gelu:registers || status=1
echo "== epilogue_variants.py done after ${SECONDS}s"
exit $status
