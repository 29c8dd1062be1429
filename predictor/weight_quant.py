"""Weight-only quantisation of a float graph, as ONNX Runtime's MatMulNBits quantiser writes it: what serving an
LLM with int8 or int4 weights costs (``predict serve --weights int8|int4``).

Every MatMul whose second operand is a 2-D weight [K, N] (and every Gemm with transB=1, weight [N, K], no bias)
becomes a com.microsoft MatMulNBits node (graph/ops/quant.py): weights packed ``bits`` per element, [N, K/block,
block x bits / 8] uint8, one scale per block of ``block_size`` (default 32) at the activations' width, no zero
points (symmetric). The product keeps the activations' precision; a decode step reads the packed weights.
Ignores: the embedding table and other non-MatMul weights stay float (as the quantiser leaves them); a K not
divisible by the block is padded up to whole blocks.
"""
from __future__ import annotations

from dataclasses import replace

from .graph.loader import Graph
from .types import Node, PredictorError, TensorInfo, frozen_map

BITS = {"int8": 8, "int4": 4}
BLOCK = 32


def _weight_kn(n: Node) -> tuple[int, int] | None:
    if len(n.inputs) < 2 or n.inputs[1] is None or not n.inputs[1].is_initializer or n.inputs[1].shape is None:
        return None
    w = n.inputs[1].shape
    if len(w) != 2:
        return None
    if n.op_type == "MatMul":
        return w[0], w[1]
    if n.op_type == "Gemm" and int(n.attrs.get("transB", 0)) == 1 and not int(n.attrs.get("transA", 0)) \
            and (len(n.inputs) < 3 or n.inputs[2] is None):
        return w[1], w[0]
    return None


def quantise_weights(graph: Graph, weights: str, block_size: int = BLOCK) -> tuple[Graph, int]:
    """(graph with MatMulNBits nodes, how many products were rewritten); ``weights`` float | int8 | int4."""
    if weights == "float":
        return graph, 0
    if weights not in BITS:
        raise PredictorError(f"--weights must be float, int8 or int4, not '{weights}'")
    bits = BITS[weights]
    out, count = [], 0
    for n in graph.nodes:
        kn = _weight_kn(n) if n.domain in ("", "ai.onnx") else None
        if kn is None:
            out.append(n)
            continue
        k, nn = kn
        blocks = -(-k // block_size)
        w = n.inputs[1]
        packed = TensorInfo(w.name + "::nbits", "uint8", (nn, blocks, block_size * bits // 8), True)
        scales = TensorInfo(w.name + "::scales", n.inputs[0].dtype if n.inputs[0] is not None else "float32",
                            (nn * blocks,), True)
        out.append(replace(n, op_type="MatMulNBits", domain="com.microsoft", inputs=(n.inputs[0], packed, scales),
                           attrs=frozen_map({"K": k, "N": nn, "bits": bits, "block_size": block_size})))
        count += 1
    return replace(graph, nodes=tuple(out)), count
