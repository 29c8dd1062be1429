#!/usr/bin/env bash
# The blind set, measured once (H200 run of 2026-12-03): weight-free torchscript exports of the zoo's
# blind split (on CPUs 8-15, in the background) and the reference-runtime timing of every blind network at
# fp32/tf32/fp16/bf16, batch 1 and 32 (one process per network, on CPUs 0-7), as gpu_session.sh's
# timing-each stage runs it. Writes $OUT/timing.tar.gz, $OUT/onnx.tar.gz, $OUT/gpu.txt.
# Usage (repo root on the GPU machine): OUT=DIR bash calibration/scripts/blind_session.sh
set -u
: "${OUT:?set OUT}"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NAMES=$(python3 -c "from calibration.networks import zoo; print(','.join(zoo.parse_names('blind')))")
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
mkdir -p "$OUT/onnx"
( taskset -c 8-15 timeout "${EXPORT_TIMEOUT:-500}" python3 -m calibration.networks.export --out "$OUT/onnx" \
    --names blind --exporters torchscript --no-ort-check --max-seconds "${EXPORT_BUDGET:-470}" \
    > "$OUT/onnx/export_log.txt" 2>&1 ) &
export_pid=$!
TIMING_NAMES="$NAMES" TIMING_BUDGET="${TIMING_BUDGET:-460}" TIMING_NET_TIMEOUT="${TIMING_NET_TIMEOUT:-70}" \
  TIMING_NET_BUDGET="${TIMING_NET_BUDGET:-50}" taskset -c 0-7 bash calibration/scripts/gpu_session.sh timing-each
wait "$export_pid"
tail -n 25 "$OUT/onnx/export_log.txt"
cd "$OUT" && tar -czf onnx.tar.gz onnx && rm -rf onnx
ls -la "$OUT"
