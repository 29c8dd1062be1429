#!/usr/bin/env bash
# Kernel-level ground truth and the blind set under autocast (H200 run of 2026-12-03):
#  1. microbenchmark run 6: the broad kernel sweeps (conv_broad: 146 convolution shapes over kernels 1-7, strides
#     1-4, dilation, channels 3-2048, spatial 7-224, batch 1-64; conv_transpose; gemm_broad; norm_broad) at
#     fp32/tf32/fp16/bf16, CUDA-graph or event timing as calibration/networks/microbench.py documents;
#  2. torch.autocast (amp, amp_bf16) forwards of the blind networks at batch 1 and 32 (run_whatif.sh).
#  3. the reference timing of mixer_b16 once more (its process crashed in blind_session.sh).
# Writes $OUT/micro.tar.gz, $OUT/whatif.tar.gz, $OUT/timing.tar.gz.   Usage: OUT=DIR bash calibration/scripts/kernels_session.sh
set -u
: "${OUT:?set OUT}"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
mkdir -p "$OUT/micro"
timeout "${MICRO_TIMEOUT:-260}" python3 -m calibration.networks.microbench --out "$OUT/micro" \
    --families conv_broad,conv_transpose,gemm_broad,norm_broad --max-seconds "${MICRO_BUDGET:-235}" \
    > "$OUT/micro/log.txt" 2>&1
echo "microbench rc=$?"; tail -n 12 "$OUT/micro/log.txt"
NAMES=$(python3 -c "from calibration.networks import zoo; print(','.join(zoo.parse_names('blind')))")
NAMES="$NAMES" GRACE_S="${GRACE_S:-15}" bash calibration/networks/run_whatif.sh "${WHATIF_BUDGET:-200}" amp,amp_bf16 \
    --batches 1,32 --case-budget-s 1.0 > "$OUT/whatif_summary.txt" 2>&1
echo "whatif rc=$?"; tail -n 50 "$OUT/whatif_summary.txt"
# the blind network whose timing process crashed in blind_session.sh (segmentation fault in its first seconds): once more
TIMING_NAMES=mixer_b16 TIMING_BUDGET=60 TIMING_NET_TIMEOUT=60 TIMING_NET_BUDGET=45 bash calibration/scripts/gpu_session.sh timing-each
cd "$OUT" && mv whatif_summary.txt whatif/ && tar -czf whatif.tar.gz whatif && rm -rf whatif
tar -czf micro.tar.gz micro && rm -rf micro
ls -la "$OUT"
