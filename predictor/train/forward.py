"""The forward pass in training mode where it differs from the exported (inference) graph.

* BatchNormalization: batch statistics instead of the running ones (the forward formula's training mode:
  6 FLOPs per element, X read twice), plus ``num_batches_tracked += 1`` (1 tiny kernel per layer, as
  ``nn.BatchNorm`` runs it in train()).
* Dropout nodes that a training export kept: one kernel writing the output and a one-byte mask (PyTorch's
  fused dropout); an eval-mode export has no Dropout nodes, so their cost is not seen (see README).
Rewrites are registered by op type (``@train_forward``) and return the node as it runs in training (batch norm
carries ``training_mode`` 1: its calibration class is ``norm_train``), its forward OpWork and any extra kernels that
run right after it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ..graph.cost import node_work
from ..graph.runtime import ABSORBED
from ..precision import PrecisionPolicy
from ..types import Node, OpWork, WorkKind, frozen_map
from .kernel import Kernel, nbytes, numel, tiny

Rewrite = Callable[[Node, OpWork, PrecisionPolicy, int], "tuple[Node, OpWork, list[Kernel]]"]
_REWRITES: dict[str, Rewrite] = {}


def train_forward(*op_types: str) -> Callable[[Rewrite], Rewrite]:
    def deco(fn: Rewrite) -> Rewrite:
        for op in op_types:
            if op in _REWRITES:
                raise ValueError(f"training forward rewrite for {op!r} registered twice")
            _REWRITES[op] = fn
        return fn

    return deco


def training_forward(node: Node, work: OpWork, policy: PrecisionPolicy,
                     opset: int) -> tuple[Node, OpWork, list[Kernel]]:
    """(the node in training mode, its forward work, extra kernels after it); unchanged when no rewrite applies."""
    fn = _REWRITES.get(node.op_type)
    if fn is None or work.kernels == 0 and (node.op_type != "Dropout" or ABSORBED in work.notes):
        return node, work, []
    return fn(node, work, policy, opset)


@train_forward("BatchNormalization")
def _batch_norm(node: Node, work: OpWork, policy: PrecisionPolicy, opset: int):
    training = replace(node, attrs=frozen_map({**node.attrs, "training_mode": 1}))
    trained = node_work(training, policy, opset)
    counter = tiny(f"{node.name}::num_batches_tracked", "counter", "forward", policy, nbytes_each=8.0,
                   source=node.name)
    return training, replace(trained, notes=trained.notes + ("training mode: batch statistics",)), [counter]


@train_forward("Dropout")
def _dropout(node: Node, work: OpWork, policy: PrecisionPolicy, opset: int):
    x = node.inputs[0]
    if x is None or x.shape is None:
        return node, work, []
    xb = nbytes(x, policy)
    w = OpWork(flops=frozen_map({WorkKind.VECTOR: 3.0 * numel(x)}), bytes_read=xb, bytes_written=xb + numel(x),
               kernels=1, input_bytes=frozen_map({x.name: xb}), notes=("training mode: fused dropout",))
    return node, w, []
