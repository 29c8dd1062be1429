"""Backward rules, one module per op family; importing this package registers them all (train/registry.py).

Conventions (the forward formulas' own, graph/ops/_common.py): an FMA is 2 FLOPs, a transcendental 4.
Every rule's kernels are the ones PyTorch's autograd launches for the op in eager mode (derivatives.yaml
formulas, cuDNN/cuBLAS backward calls), each reading and writing its tensors once (compulsory bytes; the
traffic model adds tiling re-reads and L2 residency as for forward kernels).
"""
from . import (  # noqa: F401  (imported for their @backward side effects)
    attention,
    conv,
    data_movement,
    elementwise,
    matmul,
    normalization,
    pooling,
    reduction,
    rnn,
    views,
)
