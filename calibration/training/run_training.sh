#!/usr/bin/env bash
# Training-step sweep, one process per network (a CUDA error in one cannot poison the rest), each
# under `timeout`, into $OUT/training/<name>/ (training.json, log.txt); prints the summary table.
# Run from the repository root on the GPU machine:
#   OUT=/some/dir bash calibration/training/run_training.sh 200 [extra measure args, e.g. --precisions amp]
# NAMES="resnet18 gpt2" overrides the network list; STARTUP_S (default 12) is the per-process import /
# CUDA-init / build allowance kept out of each network's --max-seconds.
set -u
: "${OUT:?set OUT to the output folder}"
BUDGET_S="${1:-200}"
shift || true
PY="${PYTHON:-python3}"
STARTUP_S="${STARTUP_S:-12}"
NAMES="${NAMES:-resnet18 resnet50 mobilenet_v3_large vit_b_16 bert_base lstm efficientnet_b0 regnet_y_1_6gf gpt2 distilbert gru}"
read -r -a LIST <<< "$NAMES"
mkdir -p "$OUT/training"
start=$(date +%s)
left_n=${#LIST[@]}
for name in "${LIST[@]}"; do
  left_s=$(( BUDGET_S - ($(date +%s) - start) ))
  if [ "$left_s" -le $(( STARTUP_S + 5 )) ]; then
    echo "skip $name: ${left_s}s of the budget left"
    left_n=$(( left_n - 1 ))
    continue
  fi
  share_s=$(( left_s / left_n ))
  max_s=$(( share_s - STARTUP_S )); [ "$max_s" -lt 5 ] && max_s=5
  limit_s=$(( share_s + 20 )); [ "$limit_s" -gt "$left_s" ] && limit_s=$left_s
  dir="$OUT/training/$name"
  mkdir -p "$dir"
  t0=$(date +%s)
  timeout -k 10 "$limit_s" "$PY" -m calibration.training.measure --out "$dir" --names "$name" \
    --max-seconds "$max_s" "$@" > "$dir/log.txt" 2>&1
  rc=$?
  echo "$name: rc=$rc $(( $(date +%s) - t0 ))s (share ${share_s}s, max-seconds ${max_s}, timeout ${limit_s}s)"
  [ "$rc" -ne 0 ] && grep -v USDT "$dir/log.txt" | tail -n 3
  left_n=$(( left_n - 1 ))
done
"$PY" -c "from calibration.training.measure import print_summaries; print_summaries('$OUT/training')"
echo "training sweep done in $(( $(date +%s) - start ))s; results under $OUT/training"
