"""How much of a tensor a kernel has just written is still in L2 when the next kernel reads it: the residency window of
the traffic model (predictor/graph/traffic.py, ``resident_fraction`` x L2 and its per-tensor rule).

    python3 calibration/scripts/l2_residency_probe.py OUT.csv

Per case: a producer writes S bytes (``y.fill_``), then T bytes of another buffer are written (``gap.fill_``, 0 for
none), then a consumer reads y (``y.sum()``: a read-only reduction). Timed is the consumer's kernel (CUPTI durations,
torch.profiler; median of REPS replays in one profiled run), warm (as above) and cold (a 1 GiB buffer written between the producer and the
consumer, evicting the L2). ``resident_mb`` = S x (1 - warm / cold) is the share of y the consumer found in L2 if a
read from L2 costs nothing next to one from HBM (a lower bound otherwise). Each replay starts from a flushed L2.
"""
import csv
import statistics
import sys

import torch

MB = 1 << 20
SIZES_MB = (4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 128, 192, 256, 512)
GAPS_MB = (0, 4, 8, 16, 24, 32, 48)
GAP_SIZES_MB = (8, 16, 32, 64)   # the producer sizes the gap sweep runs at
REPS = 15


def consumer_us(y, gap, flush, gap_elems: int, cold: bool, reps: int) -> float:
    """Median over ``reps`` replays of the consumer's kernel time (CUPTI, one profiled run of all the replays: the
    consumer's reduction kernels are the only reductions; a replay's are summed when it launches several)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            flush.fill_(0.0)
            y.fill_(1.0)
            if gap_elems:
                gap[:gap_elems].fill_(2.0)
            if cold:
                flush.fill_(3.0)
            y.sum()
        torch.cuda.synchronize()
    return reduction_us(prof, reps)


def reduction_us(prof, reps: int) -> float:
    """Median over ``reps`` replays of a profiled run's reduction kernel time (us; a replay's kernels summed)."""
    ks = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and "reduce" in e.name.lower()]
    us = [getattr(e, "device_time", None) or e.cuda_time for e in ks]
    per = max(len(us) // reps, 1)
    return statistics.median(sum(us[i:i + per]) for i in range(0, per * reps, per))


def main(out: str) -> None:
    flush = torch.empty(1024 * MB // 4, device="cuda")
    gap = torch.empty(max(GAPS_MB) * MB // 4, device="cuda")
    props = torch.cuda.get_device_properties(0)
    rows = []
    cases = [(s, 0) for s in SIZES_MB] + [(s, g) for s in GAP_SIZES_MB for g in GAPS_MB if g]
    for s_mb, g_mb in cases:
        y = torch.empty(s_mb * MB // 4, device="cuda")
        consumer_us(y, gap, flush, g_mb * MB // 4, False, 3)
        warm = consumer_us(y, gap, flush, g_mb * MB // 4, False, REPS)
        cold = consumer_us(y, gap, flush, g_mb * MB // 4, True, REPS)
        rows.append({"gpu": props.name, "l2_mb": round(props.L2_cache_size / MB, 1), "size_mb": s_mb, "gap_mb": g_mb,
                     "warm_us": round(warm, 3), "cold_us": round(cold, 3),
                     "resident_mb": round(s_mb * max(0.0, 1.0 - warm / cold), 2)})
        print(rows[-1], flush=True)
        del y
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 calibration/scripts/l2_residency_probe.py OUT.csv")
    main(sys.argv[1])
