"""How many kernels PyTorch's ``multi_tensor_apply`` launches for a list of tensors (foreach ops, fused
optimizers, the AMP unscale), from ATen/native/cuda/MultiTensorApply.cuh.

Tensors are cut into chunks of 65536 elements, one CUDA block each; a launch carries at most
``depth_to_max_tensors[depth - 1]`` tensors (110, 64, 48, 36, 30 for 1-5 tensor lists; 96, 64, ... with a
per-tensor scalar list) and at most 320 blocks. A launch fires when the tensor table is full at the end of
a tensor, when the block table is full, or at the last chunk; a tensor cut by a full block table carries
over into the next launch.
"""
from __future__ import annotations

import math
from typing import Iterable

CHUNK = 65536
MAX_BLOCKS = 320
MAX_TENSORS = (110, 64, 48, 36, 30)
MAX_TENSORS_SCALAR_LIST = (96, 64, 48, 36, 30)


def launches(numels: Iterable[int], depth: int, scalar_list: bool = False) -> int:
    sizes = [int(n) for n in numels if n > 0]
    if not sizes:
        return 0
    table = MAX_TENSORS_SCALAR_LIST if scalar_list else MAX_TENSORS
    max_tensors = table[min(max(depth, 1), len(table)) - 1]
    n_launch = loc_tensor = loc_block = 0
    last = len(sizes) - 1
    for t, numel in enumerate(sizes):
        loc_tensor += 1
        chunks = math.ceil(numel / CHUNK)
        c = 0
        while c < chunks:
            # blocks this launch can still take from this tensor
            room = MAX_BLOCKS - loc_block
            take = min(room, chunks - c)
            c += take
            loc_block += take
            end_of_tensor = c == chunks
            tensors_full = loc_tensor == max_tensors and end_of_tensor
            blocks_full = loc_block == MAX_BLOCKS
            if tensors_full or blocks_full or (t == last and end_of_tensor):
                n_launch += 1
                loc_block = 0
                loc_tensor = 0 if end_of_tensor else 1
    return n_launch
