#!/usr/bin/env bash
# One GPU-machine session: run the named stages, each time-limited, writing under $OUT; then tar them.
# Usage (repo root on the GPU machine): bash calibration/scripts/gpu_session.sh STAGE [STAGE ...]
# Stages: env export ert timing timing-each microbench ncu ncu-samples training whatif amp-kernels   (export runs in the background on the CPUs)
set -u
: "${OUT:?set OUT}"
export PYTHONUNBUFFERED=1
stamp() { echo "[$(date -u +%H:%M:%S)] $*"; }
bg_pid=""
for stage in "$@"; do
  case "$stage" in
    env)
      stamp "env probe"; timeout 120 bash calibration/scripts/env_probe.sh "$OUT/env" ;;
    export)
      stamp "export (background)"
      ( timeout 420 bash calibration/networks/run_export.sh --max-seconds 360 --dynamo-timeout-s 200 \
          > "$OUT/export_summary.txt" 2>&1 ) & bg_pid=$! ;;
    ert)
      stamp "ert"; mkdir -p "$OUT/ert"
      timeout 180 python3 -m calibration.ert --out "$OUT/ert/h200.json" > "$OUT/ert/log.txt" 2>&1
      stamp "ert rc=$?"; tail -n 30 "$OUT/ert/log.txt" ;;
    timing)
      stamp "timing"; mkdir -p "$OUT/timing"
      timeout "${TIMING_TIMEOUT:-330}" python3 -m calibration.networks.timing --out "$OUT/timing" \
          --names "${TIMING_NAMES:-resnet50,efficientnet_b0,bert_base,gpt2,lstm,gru,deeplabv3_resnet50,fcn_resnet50,vit_b_16,swin_t,mobilenet_v3_large,regnet_y_1_6gf,convnext_tiny,distilbert,resnet18,deepcam_lite,densenet121,lraspp_mobilenet_v3_large}" \
          --case-budget-s "${TIMING_CASE_S:-2.0}" --max-seconds "${TIMING_BUDGET:-300}" > "$OUT/timing/log.txt" 2>&1
      stamp "timing rc=$?"; tail -n 25 "$OUT/timing/log.txt" ;;
    microbench)
      stamp "microbench"; mkdir -p "$OUT/micro"
      timeout "${MICRO_TIMEOUT:-300}" python3 -m calibration.networks.microbench --out "$OUT/micro" \
          --max-seconds "${MICRO_BUDGET:-270}" > "$OUT/micro/log.txt" 2>&1
      stamp "microbench rc=$?"; tail -n 15 "$OUT/micro/log.txt" ;;
    ncu)
      stamp "ncu smoke"; mkdir -p "$OUT/ncu"
      timeout 200 python3 -m calibration.ncu.collect --plan calibration/ncu/plans/smoke.json --out "$OUT/ncu/smoke" \
          > "$OUT/ncu/smoke_log.txt" 2>&1; stamp "ncu smoke rc=$?"; tail -n 8 "$OUT/ncu/smoke_log.txt"
      stamp "ncu samples"
      timeout "${NCU_TIMEOUT:-410}" python3 -m calibration.ncu.collect --plan calibration/ncu/plans/h200_samples.json \
          --out "$OUT/ncu/samples" > "$OUT/ncu/samples_log.txt" 2>&1; stamp "ncu rc=$?"; tail -n 15 "$OUT/ncu/samples_log.txt" ;;
    ncu-samples)
      stamp "ncu samples"; mkdir -p "$OUT/ncu"
      timeout "${NCU_TIMEOUT:-540}" python3 -m calibration.ncu.collect --plan calibration/ncu/plans/h200_samples.json \
          --listing calibration/data/h200/env/query_metrics_gh100.txt \
          --out "$OUT/ncu/samples" > "$OUT/ncu/samples_log.txt" 2>&1; stamp "ncu rc=$?"; tail -n 15 "$OUT/ncu/samples_log.txt" ;;
    timing-each)
      # one process per network: a CUDA error in one network (a sticky illegal address) cannot poison the rest
      stamp "timing, one process per network"; mkdir -p "$OUT/timing"; t0=$(date +%s)
      # an entry NAME:P1+P2 times only those precisions (default: TIMING_PRECISIONS or all four)
      for entry in ${TIMING_NAMES//,/ }; do
        name=${entry%%:*}; precs=${TIMING_PRECISIONS:-fp32,tf32,fp16,bf16}
        [ "$entry" != "$name" ] && precs=${entry#*:} && precs=${precs//+/,}
        if [ $(( $(date +%s) - t0 )) -gt "${TIMING_BUDGET:-300}" ]; then echo "skipped $name: budget"; continue; fi
        timeout "${TIMING_NET_TIMEOUT:-70}" python3 -m calibration.networks.timing --names "$name" --precisions "$precs" \
            --out "$OUT/timing/$name" --case-budget-s "${TIMING_CASE_S:-1.5}" --max-seconds "${TIMING_NET_BUDGET:-55}" \
            > "$OUT/timing/$name.log" 2>&1
        echo "$name ($precs) rc=$? $(( $(date +%s) - t0 )) s"
      done ;;
    training)
      # training steps (eager phases, profiled phases, whole step in a CUDA graph), one process per network
      stamp "training"; NAMES="${TRAIN_NAMES:-resnet18 resnet50 mobilenet_v3_large bert_base efficientnet_b0 regnet_y_1_6gf gpt2 distilbert}" \
        bash calibration/training/run_training.sh "${TRAIN_BUDGET:-300}" ${TRAIN_ARGS:-} > "$OUT/training_summary.txt" 2>&1
      stamp "training rc=$?"; tail -n 70 "$OUT/training_summary.txt" ;;
    whatif)
      # autocast / TorchInductor references, one process per network
      stamp "whatif"; NAMES="${WHATIF_NAMES:-swin_t,fcn_resnet50,deepcam_lite}" \
        bash calibration/networks/run_whatif.sh "${WHATIF_BUDGET:-180}" "${WHATIF_MODES:-inductor_fp16}" \
        --batches "${WHATIF_BATCHES:-32}" > "$OUT/whatif_summary.txt" 2>&1
      stamp "whatif rc=$?"; tail -n 40 "$OUT/whatif_summary.txt" ;;
    amp-kernels)
      stamp "amp kernel tables"; mkdir -p "$OUT/ampk"
      timeout "${AMPK_TIMEOUT:-80}" python3 -m calibration.networks.amp_kernels --out "$OUT/ampk" > "$OUT/ampk/log.txt" 2>&1
      stamp "amp-kernels rc=$?"; tail -n 32 "$OUT/ampk/log.txt" ;;
    *) echo "unknown stage $stage" ;;
  esac
done
if [ -n "$bg_pid" ]; then stamp "waiting for export"; wait "$bg_pid"; cat "$OUT/export_summary.txt" | tail -n 40; fi
cd "$OUT" && ls export_* >/dev/null 2>&1 && tar -czf export_meta.tar.gz export_* && rm -f export_*.txt export_*.json
for d in env ert timing micro ncu; do [ -d "$d" ] && tar -czf "$d.tar.gz" "$d" && rm -rf "$d"; done
stamp "done: $(ls "$OUT" | tr '\n' ' ')"
