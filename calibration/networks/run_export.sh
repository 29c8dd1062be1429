#!/usr/bin/env bash
# Export the network zoo to weight-free ONNX under $OUT/onnx, tar it to $OUT/onnx.tar.gz and print
# a summary table. Extra arguments go to calibration.networks.export (e.g. --names resnet50,gpt2).
# Run from the repository root:  OUT=/some/dir bash calibration/networks/run_export.sh
set -u
: "${OUT:?set OUT to the output folder}"
PY="${PYTHON:-python3}"
rm -rf "$OUT/onnx" && mkdir -p "$OUT/onnx"
start=$(date +%s)
"$PY" -m calibration.networks.export --out "$OUT/onnx" --exporters torchscript,dynamo "$@" \
    > "$OUT/export_log.txt" 2>&1
rc=$?
cp "$OUT/onnx/export_manifest.json" "$OUT/export_manifest.json" 2>/dev/null
tar -czf "$OUT/onnx.tar.gz" -C "$OUT" onnx && rm -rf "$OUT/onnx"
# the summary table printed at the end of the export (fall back to the log's tail)
sed -n '/^network  /,$p' "$OUT/export_log.txt" | grep . || tail -n 40 "$OUT/export_log.txt"
echo "export rc=$rc, $(( $(date +%s) - start )) s; files: $(ls "$OUT" | tr '\n' ' ')"
exit $rc
