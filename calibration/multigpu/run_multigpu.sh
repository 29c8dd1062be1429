#!/usr/bin/env bash
# Issue 21's collection on one multi-GPU host: NCCL curves and DDP steps at 1, 2, 4, 8 GPUs.
#   bash calibration/multigpu/run_multigpu.sh            # writes under $OUT (default ./multigpu_out)
# Multicast stays off: NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-./multigpu_out}
NGPU=$(nvidia-smi -L | wc -l)
mkdir -p "$OUT"
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1 || true
for n in 2 4 8; do
  [ "$n" -le "$NGPU" ] || continue
  torchrun --standalone --nproc_per_node="$n" -m calibration.multigpu.nccl_sweep --out "$OUT/nccl" ${NCCL_ARGS:-}
done
for n in 1 2 4 8; do
  [ "$n" -le "$NGPU" ] || continue
  torchrun --standalone --nproc_per_node="$n" -m calibration.multigpu.ddp_step --out "$OUT/ddp" ${DDP_ARGS:-}
done
