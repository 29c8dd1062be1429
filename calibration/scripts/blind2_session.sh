#!/usr/bin/env bash
# The second blind set, measured once (H200, 2026-12-03): the reference-runtime timing of the zoo's blind split at
# fp32/tf32/fp16/bf16, batch 1 and 32, one process per network (gpu_session.sh's timing-each stage, on CPUs 0-7),
# and, with EXPORT=1, the weight-free torchscript exports of the same networks in the background (CPUs 8-15).
# BLIND_PART=1|2 times the first 11 / the remaining networks (two calls of the GPU machine's 10-minute limit).
# Writes $OUT/timing.tar.gz, $OUT/onnx.tar.gz (EXPORT=1), $OUT/gpu.txt.
# Usage (repo root on the GPU machine): OUT=DIR BLIND_PART=1 EXPORT=1 bash calibration/scripts/blind2_session.sh
# The third blind set (9 networks, one call): OUT=DIR BLIND_SPLIT=blind3 BLIND_PART=all EXPORT=1 bash ...
# The fourth (25 networks, two calls): OUT=DIR BLIND_SPLIT=blind4 BLIND_HEAD=13 BLIND_PART=1|2 EXPORT=1 bash ...
# The fifth (25 networks, two calls): OUT=DIR BLIND_SPLIT=blind5 BLIND_HEAD=13 BLIND_PART=1|2 EXPORT=1 bash ...
# The sixth (24 networks, two calls): OUT=DIR BLIND_SPLIT=blind6 BLIND_HEAD=12 BLIND_PART=1|2 EXPORT=1 bash ...
# The seventh (24 networks, two calls): OUT=DIR BLIND_SPLIT=blind7 BLIND_HEAD=12 BLIND_PART=1|2 EXPORT=1 bash ...
# The eighth (23 networks, two calls; ONNX exported on a CPU): OUT=DIR BLIND_SPLIT=blind8 BLIND_HEAD=12 BLIND_PART=1|2 EXPORT=0 bash ...
# The ninth (9 networks, one call; ONNX exported on a CPU): OUT=DIR BLIND_SPLIT=blind9 BLIND_PART=all EXPORT=0 bash ...
# The tenth (8 networks, one call; ONNX exported on a CPU): OUT=DIR BLIND_SPLIT=blind10 BLIND_PART=all EXPORT=0 bash ...
# The eleventh (7 networks, two calls; ONNX exported on a CPU): OUT=DIR BLIND_SPLIT=blind11 BLIND_HEAD=4 BLIND_PART=1|2 EXPORT=0 TIMING_BUDGET=560 TIMING_NET_TIMEOUT=180 TIMING_NET_BUDGET=120 bash ...
# The twelfth (5 networks, two calls; ONNX exported on a CPU): OUT=DIR BLIND_SPLIT=blind12 BLIND_HEAD=3 BLIND_PART=1|2 EXPORT=0 TIMING_BUDGET=540 TIMING_NET_TIMEOUT=220 TIMING_NET_BUDGET=180 bash ...
# The thirteenth (6 networks, two calls; ONNX exported on a CPU): OUT=DIR BLIND_SPLIT=blind13 BLIND_HEAD=3 BLIND_PART=1|2 EXPORT=0 TIMING_BUDGET=555 TIMING_NET_TIMEOUT=200 TIMING_NET_BUDGET=160 bash ...
# The fourteenth (4 networks, one call; ONNX exported on a CPU; diffusers carried as a wheel in .whl): OUT=DIR BLIND_SPLIT=blind14 BLIND_PART=all EXPORT=0 TIMING_BUDGET=560 TIMING_NET_TIMEOUT=150 TIMING_NET_BUDGET=125 bash ...
# The fifteenth (4 networks, one call; ONNX exported on a CPU; diffusers carried as a wheel in .whl, for the SD VAE decoder): OUT=DIR BLIND_SPLIT=blind15 BLIND_PART=all EXPORT=0 TIMING_BUDGET=560 TIMING_NET_TIMEOUT=150 TIMING_NET_BUDGET=125 bash ...
# The sixteenth (4 networks, one call; ONNX exported on a CPU; diffusers carried as a wheel in .whl, for SD3's MMDiT): OUT=DIR BLIND_SPLIT=blind16 BLIND_PART=all EXPORT=0 TIMING_BUDGET=560 TIMING_NET_TIMEOUT=150 TIMING_NET_BUDGET=125 bash ...
# The seventeenth (4 networks, one call; ONNX exported on a CPU; diffusers carried as a wheel in .whl, for Flux, Wan 2.1 and Sana): OUT=DIR BLIND_SPLIT=blind17 BLIND_PART=all EXPORT=0 TIMING_BUDGET=560 TIMING_NET_TIMEOUT=150 TIMING_NET_BUDGET=125 bash ...
set -u
: "${OUT:?set OUT}"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
SPLIT="${BLIND_SPLIT:-blind}"   # blind3: the third blind set (BLIND_PART=all)
ALL=$(python3 -c "from calibration.networks import zoo; print(' '.join(zoo.parse_names('$SPLIT')))")
set -- $ALL
case "${BLIND_PART:-1}" in
  1) NAMES=$(echo "$ALL" | tr ' ' '\n' | head -n "${BLIND_HEAD:-11}" | paste -sd, -) ;;
  2) NAMES=$(echo "$ALL" | tr ' ' '\n' | tail -n +$(( ${BLIND_HEAD:-11} + 1 )) | paste -sd, -) ;;
  *) NAMES=$(echo "$ALL" | tr ' ' ',') ;;
esac
echo "timing: $NAMES"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
export_pid=""
if [ "${EXPORT:-0}" = 1 ]; then
  mkdir -p "$OUT/onnx"
  ( taskset -c 8-15 timeout "${EXPORT_TIMEOUT:-520}" python3 -m calibration.networks.export --out "$OUT/onnx" \
      --names "$SPLIT" --exporters torchscript --no-ort-check --max-seconds "${EXPORT_BUDGET:-500}" \
      > "$OUT/onnx/export_log.txt" 2>&1 ) &
  export_pid=$!
fi
TIMING_NAMES="$NAMES" TIMING_BUDGET="${TIMING_BUDGET:-480}" TIMING_NET_TIMEOUT="${TIMING_NET_TIMEOUT:-75}" \
  TIMING_NET_BUDGET="${TIMING_NET_BUDGET:-55}" taskset -c 0-7 bash calibration/scripts/gpu_session.sh timing-each
if [ -n "$export_pid" ]; then
  wait "$export_pid"
  tail -n 25 "$OUT/onnx/export_log.txt"
  (cd "$OUT" && tar -czf onnx.tar.gz onnx && rm -rf onnx)
fi
ls -la "$OUT"
