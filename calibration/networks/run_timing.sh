#!/usr/bin/env bash
# Reference GPU timing sweep into $OUT (timing.json, kernels.csv.gz, timing_log.txt); prints the
# summary table. Extra arguments go to calibration.networks.timing (e.g. --names train).
# Run from the repository root:  OUT=/some/dir bash calibration/networks/run_timing.sh --max-seconds 450
set -u
: "${OUT:?set OUT to the output folder}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"
"$PY" -m calibration.networks.timing --out "$OUT" "$@" > "$OUT/timing_log.txt" 2>&1
rc=$?
sed -n '/^network  /,$p' "$OUT/timing_log.txt" | grep . || tail -n 60 "$OUT/timing_log.txt"
grep -E "Traceback|Error" "$OUT/timing_log.txt" | grep -v "^network" | sort | uniq -c | head -5
echo "timing rc=$rc; files: $(ls "$OUT" | tr '\n' ' ')"
exit $rc
