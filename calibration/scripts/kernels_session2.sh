#!/usr/bin/env bash
# Second try of kernels_session.sh (H200, 2026-12-03), whose microbenchmark CSV was lost (the script's own tar step
# overwrote it) and whose autocast budget ran out after a few networks:
#  1. microbenchmark run 6: conv_broad, conv_transpose, gemm_broad, norm_broad at fp32/tf32/fp16/bf16 (92 s last time);
#  2. torch.autocast (amp) forwards at batch 1 and 32 of the blind networks not measured then.
# Writes $OUT/micro.tar.gz, $OUT/whatif.tar.gz.   Usage: OUT=DIR bash calibration/scripts/kernels_session2.sh
set -u
: "${OUT:?set OUT}"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
mkdir -p "$OUT/micro"
timeout "${MICRO_TIMEOUT:-150}" python3 -m calibration.networks.microbench --out "$OUT/micro" \
    --families conv_broad,conv_transpose,gemm_broad,norm_broad --max-seconds "${MICRO_BUDGET:-130}" \
    > "$OUT/micro/log.txt" 2>&1
echo "microbench rc=$?"; tail -n 6 "$OUT/micro/log.txt"
(cd "$OUT" && tar -czf micro.tar.gz micro && rm -rf micro)
NAMES="${NAMES:-alexnet,conv_autoencoder,unet,t5_encoder,opt_125m,llama_small,bilstm,tanh_mlp,poolformer_s12,r3d_18,shufflenet_v2_x1_0}" \
  GRACE_S="${GRACE_S:-15}" bash calibration/networks/run_whatif.sh "${WHATIF_BUDGET:-320}" amp \
    --batches 1,32 --case-budget-s 1.0 > "$OUT/whatif_summary.txt" 2>&1
echo "whatif rc=$?"; grep -E "^== |replay|eager|over budget" "$OUT/whatif_summary.txt" | tail -n 40
(cd "$OUT" && mv whatif_summary.txt whatif/ && tar -czf whatif.tar.gz whatif && rm -rf whatif)
ls -la "$OUT"
