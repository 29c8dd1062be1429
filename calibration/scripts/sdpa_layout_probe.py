"""Which kernel F.scaled_dot_product_attention runs, and how long it takes, for contiguous [B, H, S, D] inputs (the
microbenchmark's layout) against head-transposed views of [B, S, H, D] projections (the networks' layout).

    python3 calibration/scripts/sdpa_layout_probe.py OUT.csv

Per (B, H, S, D, precision, layout): the kernels one call launches (torch.profiler) and the median of 50 CUDA-event
timings of a CUDA graph of 5 back-to-back calls, divided by 5 (after 10 warm-up calls). fp32 with TF32 off.
"""
import csv
import sys

import torch
import torch.nn.functional as F

SHAPES = [(1, 12, 128, 64), (32, 12, 128, 64), (32, 12, 197, 64), (8, 16, 2048, 64), (32, 12, 1600, 16),
          (512, 12, 100, 16), (2, 12, 1024, 128), (32, 16, 2048, 32), (1, 8, 1024, 128)]
DT = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def inputs(b, h, s, d, dt, layout):
    if layout == "contiguous":
        return [torch.randn(b, h, s, d, device="cuda", dtype=dt) for _ in range(3)]
    return [torch.randn(b, s, h, d, device="cuda", dtype=dt).transpose(1, 2) for _ in range(3)]


def main(out):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rows = []
    for b, h, s, d in SHAPES:
        for p, dt in DT.items():
            for layout in ("contiguous", "transposed"):
                q, k, v = inputs(b, h, s, d, dt, layout)
                f = lambda: F.scaled_dot_product_attention(q, k, v)
                for _ in range(10):
                    f()
                torch.cuda.synchronize()
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                    f()
                    torch.cuda.synchronize()
                names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
                g = torch.cuda.CUDAGraph()
                st = torch.cuda.Stream()
                with torch.cuda.stream(st):
                    f()
                    with torch.cuda.graph(g):
                        for _ in range(5):
                            f()
                torch.cuda.synchronize()
                ts = []
                for _ in range(50):
                    a, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    a.record(); g.replay(); e.record(); e.synchronize()
                    ts.append(a.elapsed_time(e) / 5 * 1e-3)
                ts.sort()
                rows.append({"B": b, "H": h, "S": s, "D": d, "precision": p, "layout": layout,
                             "time_s": ts[len(ts) // 2], "kernels": " | ".join(n[:90] for n in names)})
                print(rows[-1], flush=True)
                del g, q, k, v
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 calibration/scripts/sdpa_layout_probe.py OUT.csv")
    main(sys.argv[1])
