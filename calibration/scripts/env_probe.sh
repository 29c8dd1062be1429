#!/usr/bin/env bash
# Records the GPU machine's environment (GPU, driver, CUDA, library versions, ncu metric list) under $1.
# Run on the GPU machine from the repo root: bash calibration/scripts/env_probe.sh "$OUT/env"
set -u
out=${1:-$OUT/env}
mkdir -p "$out"
date -u +%Y-%m-%dT%H:%M:%SZ > "$out/date.txt"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv > "$out/gpu.csv" 2>&1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "$NCU" > "$out/ncu_path.txt"
"$NCU" --version > "$out/ncu_version.txt" 2>&1
"$NCU" --query-metrics --chip gh100 > "$out/query_metrics_gh100.txt" 2>&1
"$NCU" --query-metrics-mode suffix --metrics sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32 --chip gh100 > "$out/query_suffix_example.txt" 2>&1
nvcc --version > "$out/nvcc.txt" 2>&1
python3 - > "$out/python_env.json" 2>&1 <<'PY'
import json, platform
info = {"python": platform.python_version()}
for mod in ("torch", "torchvision", "timm", "transformers", "onnx", "onnxscript", "onnxruntime", "cupy", "numpy"):
    try:
        m = __import__(mod)
        info[mod] = getattr(m, "__version__", "?")
    except Exception as e:
        info[mod] = f"import failed: {e}"
try:
    import torch
    p = torch.cuda.get_device_properties(0)
    info["device"] = {"name": p.name, "sm_count": p.multi_processor_count, "total_memory": p.total_memory,
                      "l2_cache_size": getattr(p, "L2_cache_size", None), "cc": f"{p.major}.{p.minor}"}
    info["cudnn"] = torch.backends.cudnn.version()
    info["cuda"] = torch.version.cuda
except Exception as e:
    info["device"] = f"failed: {e}"
try:
    import cupy
    info["cupy_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
    info["cupy_driver"] = cupy.cuda.runtime.driverGetVersion()
    props = cupy.cuda.runtime.getDeviceProperties(0)
    info["cupy_props"] = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in props.items()
                          if isinstance(v, (int, float, bytes, str))}
except Exception as e:
    info["cupy"] = f"failed: {e}"
print(json.dumps(info, indent=1, default=str))
PY
echo "env probe written to $out"
