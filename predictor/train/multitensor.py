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
    """Launches of ``multi_tensor_apply`` over tensors of ``numels`` elements: the loop of
    MultiTensorApply.cuh in closed form per tensor (whole block tables of one tensor counted by division), so a
    tensor of 2**80 elements costs what a small one does."""
    sizes = [int(n) for n in numels if n > 0]
    if not sizes:
        return 0
    table = MAX_TENSORS_SCALAR_LIST if scalar_list else MAX_TENSORS
    max_tensors = table[min(max(depth, 1), len(table)) - 1]
    n_launch = loc_tensor = loc_block = 0
    last = len(sizes) - 1
    for t, numel in enumerate(sizes):
        loc_tensor += 1
        rem = -(-numel // CHUNK)  # chunks of this tensor
        # the first take fills what the open launch has room for
        take = min(MAX_BLOCKS - loc_block, rem)
        rem -= take
        loc_block += take
        if (loc_tensor == max_tensors and rem == 0) or loc_block == MAX_BLOCKS or (t == last and rem == 0):
            n_launch += 1
            loc_block = 0
            loc_tensor = 0 if rem == 0 else 1
        if rem == 0:
            continue
        # the launch just fired on a full block table (take == room): whole tables of this tensor follow
        full, rest = divmod(rem, MAX_BLOCKS)
        n_launch += full
        if rest == 0:
            loc_tensor = 0  # the last full table ended the tensor
            continue
        loc_block = rest  # the tensor's tail opens the next launch, carried over (loc_tensor stays 1)
        if loc_tensor == max_tensors or t == last:
            n_launch += 1
            loc_block = 0
            loc_tensor = 0
    return n_launch
