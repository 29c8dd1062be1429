#!/usr/bin/env bash
# What-if sweep (autocast / torch.compile), one process per network so that a CUDA error cannot
# poison the rest; each under `timeout`, writing "$OUT/whatif/<name>" (whatif.json, log.txt).
#   OUT=/some/dir bash calibration/networks/run_whatif.sh [BUDGET_S=300] [MODES] [extra whatif args...]
# NAMES (env, comma list) overrides the default networks (the held-out split). Each network gets a
# fair share of the time left (--max-seconds) plus GRACE_S (env, default 90) for the case in progress.
set -u
: "${OUT:?set OUT to the output folder}"
PY="${PYTHON:-python3}"
BUDGET_S="${1:-300}"
MODES="${2:-amp,amp_bf16,inductor_fp16,inductor_fp32}"
shift $(( $# < 2 ? $# : 2 ))
NAMES="${NAMES:-efficientnet_b0,regnet_y_1_6gf,swin_t,gpt2,distilbert,fcn_resnet50,deepcam_lite,gru}"
GRACE_S="${GRACE_S:-90}"
export TORCHINDUCTOR_COMPILE_THREADS="${TORCHINDUCTOR_COMPILE_THREADS:-16}"
IFS=',' read -r -a NETS <<< "$NAMES"
mkdir -p "$OUT/whatif"
start=$(date +%s)
left_n=${#NETS[@]}
rc_all=0
for name in "${NETS[@]}"; do
  now=$(date +%s)
  left_s=$(( BUDGET_S - (now - start) ))
  dir="$OUT/whatif/$name"
  mkdir -p "$dir"
  if (( left_s <= 0 )); then
    echo "  $name: skipped (over budget)"; left_n=$((left_n - 1)); continue
  fi
  share_s=$(( left_s / left_n ))
  (( share_s < 1 )) && share_s=1
  t0=$(date +%s)
  timeout --kill-after=15 $(( share_s + GRACE_S )) "$PY" -m calibration.networks.whatif --out "$dir" \
    --names "$name" --modes "$MODES" --max-seconds "$share_s" "$@" > "$dir/log.txt" 2>&1
  rc=$?
  (( rc != 0 )) && rc_all=$rc
  echo "== $name: rc=$rc elapsed $(( $(date +%s) - t0 )) s (share ${share_s} s)"
  sed -n '/^network  /,/ cases, /p' "$dir/log.txt" | grep . || tail -n 15 "$dir/log.txt"
  left_n=$((left_n - 1))
done
echo "whatif total elapsed $(( $(date +%s) - start )) s; results under $OUT/whatif/<name>/whatif.json"
exit $rc_all
