"""The view of one node that cost formulas see: shapes, attributes with schema defaults, byte sizes."""
from __future__ import annotations

from functools import lru_cache
from math import prod
from typing import Any

from ..precision import PrecisionPolicy
from ..types import DEFAULT_OPSET, Node, OpWork, TensorInfo, WorkKind, frozen_map


# Node.attrs marks set by predictor/slice_assign.py: a ScatterND run as one copy into a view (PyTorch's slice
# assignment), and a node that only builds such a ScatterND's index grid (no kernel)
SLICE_ASSIGN = "slice_assign"
INDEX_GRID = "index_grid"
# and a Gather whose indices are such a grid: the exporter's form of an as_strided view (Longformer's overlapping
# chunks), one copy of the gathered elements in PyTorch, no index tensor read
STRIDED_GATHER = "strided_gather"
# and a Slice/Expand/Reshape that only passes a view to such an assignment's updates (the copy_ reads it strided)
SOURCE_VIEW = "source_view"
# Node.attrs mark set by predictor/layout_views.py: a permute PyTorch runs as a view of channels-last memory (no kernel)
LAYOUT_VIEW = "layout_view"
# Node.attrs marks set by predictor/strided_norms.py: a permute or slice PyTorch keeps as a strided view (no kernel), and
# a layer norm whose input is such a view (it copies it first: LayerNormalization:strided's hidden kernels)
STRIDED_VIEW = "strided_view"
STRIDED_INPUT = "strided_input"
# Node.attrs mark set by predictor/causal_mask.py: builds a causal mask that fused attention applies itself (no kernel)
CAUSAL_MASK = "causal_mask"
# Node.attrs mark set by predictor/serve.py on a decode step's Concat(past, new): the serving engine's in-place append
# to a static or paged KV cache (one copy of the new token; the cache stays in HBM); the value is the past input's index
KV_APPEND = "kv_append"

class ShapeUnknown(Exception):
    """A formula needed a shape that the loader could not infer."""


@lru_cache(maxsize=None)
def _schema_defaults(op_type: str, domain: str, opset: int) -> dict[str, Any]:
    """Attribute defaults of the op's schema: the bundled table first (no onnx import), else onnx.defs."""
    from .ops._schema_defaults import schema_defaults

    table = schema_defaults(op_type, domain, opset)
    if table is not None:
        return table
    import onnx.defs
    from onnx import helper

    try:
        schema = onnx.defs.get_schema(op_type, opset, domain if domain not in ("ai.onnx",) else "")
    except Exception:  # unknown op or domain: no defaults
        return {}
    out: dict[str, Any] = {}
    for name, attr in schema.attributes.items():
        if attr.default_value is not None and attr.default_value.name:
            out[name] = helper.get_attribute_value(attr.default_value)
    return out


class OpContext:
    """Read-only helpers over a :class:`Node` under a precision policy."""

    def __init__(self, node: Node, policy: PrecisionPolicy, opset: int = DEFAULT_OPSET):
        self.node = node
        self.policy = policy
        self.opset = opset

    # --- attributes ---------------------------------------------------------------------------
    def attr(self, name: str, default: Any = None) -> Any:
        if name in self.node.attrs:
            return self.node.attrs[name]
        schema = _schema_defaults(self.node.op_type, self.node.domain, self.opset)
        if name in schema:
            val = schema[name]
            return val.decode() if isinstance(val, bytes) else val
        return default

    # --- tensors ------------------------------------------------------------------------------
    @property
    def n_inputs(self) -> int:
        return len(self.node.inputs)

    def has_input(self, i: int) -> bool:
        return i < len(self.node.inputs) and self.node.inputs[i] is not None

    def input(self, i: int) -> TensorInfo:
        if not self.has_input(i):
            raise ShapeUnknown(f"{self.node.op_type} '{self.node.name}': input {i} missing")
        return self.node.inputs[i]

    def output(self, i: int = 0) -> TensorInfo:
        return self.node.outputs[i]

    def in_shape(self, i: int = 0) -> tuple[int, ...]:
        return _shape(self.input(i), self.node)

    def out_shape(self, i: int = 0) -> tuple[int, ...]:
        return _shape(self.output(i), self.node)

    def in_numel(self, i: int = 0) -> int:
        return prod(self.in_shape(i))

    def out_numel(self, i: int = 0) -> int:
        return prod(self.out_shape(i))

    def const(self, i: int) -> tuple | None:
        """Known integer values of input ``i`` (axes, pads, shapes), or None."""
        if not self.has_input(i):
            return None
        return self.node.const_inputs.get(self.node.inputs[i].name)

    def tensor_bytes(self, t: TensorInfo) -> int:
        return prod(_shape(t, self.node)) * self.policy.dtype_bytes(t.dtype)

    def in_bytes(self, i: int = 0) -> int:
        return self.tensor_bytes(self.input(i))

    def out_bytes(self, i: int = 0) -> int:
        return self.tensor_bytes(self.output(i))

    def all_in_bytes(self) -> int:
        return sum(self.tensor_bytes(t) for t in self.node.inputs if t is not None)

    def all_out_bytes(self) -> int:
        return sum(self.tensor_bytes(t) for t in self.node.outputs if t is not None and t.name)

    # --- result builders ----------------------------------------------------------------------
    def work(self, matmul_flops: float = 0.0, vector_flops: float = 0.0, *, kernels: int = 1,
             bytes_read: float | None = None, bytes_written: float | None = None,
             weight_bytes: float = 0.0, notes: tuple[str, ...] = (),
             gemm: tuple[int, int, int, int] | None = None, gemm_operand_bytes: float = 0.0,
             rows: int = 0) -> OpWork:
        """OpWork with compulsory bytes (every input read once, every output written once) by default."""
        flops = {}
        if matmul_flops:
            flops[WorkKind.MATMUL] = float(matmul_flops)
        if vector_flops:
            flops[WorkKind.VECTOR] = float(vector_flops)
        return OpWork(
            flops=flops,
            bytes_read=float(self.all_in_bytes() if bytes_read is None else bytes_read),
            bytes_written=float(self.all_out_bytes() if bytes_written is None else bytes_written),
            kernels=kernels,
            weight_bytes=float(weight_bytes),
            notes=notes,
            input_bytes=frozen_map(self._input_bytes()),
            gemm=gemm,
            gemm_operand_bytes=float(gemm_operand_bytes),
            rows=int(rows),
        )

    def _input_bytes(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for t in self.node.inputs:
            if t is not None and t.shape is not None:
                out[t.name] = out.get(t.name, 0.0) + float(self.tensor_bytes(t))
        return out

    def free_view(self) -> OpWork:
        """A node the runtime executes as a view or on the host: no kernel, no bytes."""
        return OpWork(flops={}, bytes_read=0.0, bytes_written=0.0, kernels=0)


def _shape(t: TensorInfo, node: Node) -> tuple[int, ...]:
    if t.shape is None:
        raise ShapeUnknown(f"{node.op_type} '{node.name}': shape of '{t.name}' unknown")
    return t.shape
