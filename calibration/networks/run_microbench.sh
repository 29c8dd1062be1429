#!/usr/bin/env bash
# Op microbenchmark sweep into $OUT (microbench.csv, microbench_env.json, microbench_log.txt);
# prints the summary table. Extra arguments go to calibration.networks.microbench.
# Run from the repository root:  OUT=/some/dir bash calibration/networks/run_microbench.sh --max-seconds 280
set -u
: "${OUT:?set OUT to the output folder}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"
"$PY" -m calibration.networks.microbench --out "$OUT" "$@" > "$OUT/microbench_log.txt" 2>&1
rc=$?
sed -n '/^family  /,$p' "$OUT/microbench_log.txt" | grep . || tail -n 60 "$OUT/microbench_log.txt"
grep -E "^  [a-z_0-9]+ +[0-9]+ cases" "$OUT/microbench_log.txt" | awk '{printf "%s %s; ", $1, $4} END {print ""}'
echo "microbench rc=$rc; files: $(ls "$OUT" | tr '\n' ' ')"
exit $rc
