"""How much of a slice of a large tensor a kernel has just written is still in L2 when the next kernel reads only that
slice: the per-tensor rule of the traffic model's streaming residency (predictor/graph/traffic.py) for consumers that
read part of a tensor (a Slice, a Gather of a few rows, a strided view's copy).

    python3 calibration/scripts/l2_partial_read_probe.py OUT.csv

Per case: a producer writes S bytes (``y.fill_``), then a consumer reads R bytes of y, at its head, middle or tail
(``y[a:a + r].sum()``: a read-only reduction of a contiguous slice). Timed is the consumer's kernel (CUPTI durations,
torch.profiler; median of REPS replays in one profiled run), warm (as above) and cold (a 1 GiB buffer written between
the producer and the consumer, evicting the L2). ``resident_mb`` = R x (1 - warm / cold) is the share of the slice the
consumer found in L2 if a read from L2 costs nothing next to one from HBM (a lower bound otherwise). The same method as
l2_residency_probe.py, whose whole-tensor reads this extends.
"""
import csv
import sys

import torch

from l2_residency_probe import reduction_us  # this script's folder is on sys.path when it runs

MB = 1 << 20
SIZES_MB = (16, 32, 48, 64, 96, 128, 256, 512)
READS_MB = (1, 4, 8, 16, 32)
WHERE = ("head", "middle", "tail")
REPS = 15


def consumer_us(y, piece, flush, cold: bool, reps: int) -> float:
    """Median over ``reps`` replays of the consumer's reduction kernel time (CUPTI)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            flush.fill_(0.0)
            y.fill_(1.0)
            if cold:
                flush.fill_(3.0)
            piece.sum()
        torch.cuda.synchronize()
    return reduction_us(prof, reps)


def main(out: str) -> None:
    flush = torch.empty(1024 * MB // 4, device="cuda")
    props = torch.cuda.get_device_properties(0)
    rows = []
    for s_mb in SIZES_MB:
        y = torch.empty(s_mb * MB // 4, device="cuda")
        for r_mb in READS_MB:
            if r_mb * 2 > s_mb:
                continue
            n, r = y.numel(), r_mb * MB // 4
            for where in WHERE:
                a = {"head": 0, "middle": (n - r) // 2, "tail": n - r}[where]
                piece = y[a:a + r]
                consumer_us(y, piece, flush, False, 3)
                warm = consumer_us(y, piece, flush, False, REPS)
                cold = consumer_us(y, piece, flush, True, REPS)
                rows.append({"gpu": props.name, "l2_mb": round(props.L2_cache_size / MB, 1), "size_mb": s_mb,
                             "read_mb": r_mb, "where": where, "warm_us": round(warm, 3), "cold_us": round(cold, 3),
                             "resident_mb": round(r_mb * max(0.0, 1.0 - warm / cold), 2)})
                print(rows[-1], flush=True)
        del y
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 calibration/scripts/l2_partial_read_probe.py OUT.csv")
    main(sys.argv[1])
