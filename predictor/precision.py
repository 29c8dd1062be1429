"""Precision policies: storage bytes per element and the (precision, unit) each kind of work runs on."""
from __future__ import annotations


from .types import Precision, PredictorError, Unit, WorkKind
from .frozen import frozen_dataclass

FLOAT_DTYPES = frozenset({"float64", "float32", "float16", "bfloat16", "float8e4m3fn", "float8e5m2",
                          "float8e4m3fnuz", "float8e5m2fnuz"})

_DTYPE_BYTES = {
    "float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2,
    "int8": 1, "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "bool": 1, "complex64": 8,
    "complex128": 16, "float8e4m3fn": 1, "float8e5m2": 1, "float8e4m3fnuz": 1, "float8e5m2fnuz": 1,
    "string": 8, "int4": 1, "uint4": 1,
}


@frozen_dataclass
class PrecisionPolicy:
    """How a network runs at one ``--precision``.

    storage: bytes per element of every floating-point tensor (integer and bool tensors keep their own).
    matmul: (precision, unit) of MATMUL work; vector: (precision, unit) of VECTOR work.
    natural_floats: every float tensor keeps the bytes of its own dtype (the nodes of a mixed-precision
    graph, whose tensors carry their runtime dtype, see predictor/amp.py) instead of ``storage_bytes``.
    Ignores: mixed policies keep fp32 accumulators inside the matmul units, which costs no extra bytes.
    """

    name: str
    storage_bytes: int
    matmul: tuple[Precision, Unit]
    vector: tuple[Precision, Unit]
    natural_floats: bool = False

    def dtype_bytes(self, dtype: str) -> int:
        if dtype in FLOAT_DTYPES and not self.natural_floats:
            return self.storage_bytes
        return _DTYPE_BYTES.get(dtype, 4)

    def unit_for(self, kind: WorkKind) -> tuple[Precision, Unit]:
        return self.matmul if kind is WorkKind.MATMUL else self.vector


POLICIES: dict[str, PrecisionPolicy] = {
    "fp32": PrecisionPolicy("fp32", 4, (Precision.FP32, Unit.CUDA), (Precision.FP32, Unit.CUDA)),
    "tf32": PrecisionPolicy("tf32", 4, (Precision.TF32, Unit.TENSOR), (Precision.FP32, Unit.CUDA)),
    "fp16": PrecisionPolicy("fp16", 2, (Precision.FP16, Unit.TENSOR), (Precision.FP16, Unit.CUDA)),
    "bf16": PrecisionPolicy("bf16", 2, (Precision.BF16, Unit.TENSOR), (Precision.BF16, Unit.CUDA)),
    # fp8/int8: matmuls on the 8-bit tensor path, everything else stored in 8 bits but computed in fp16
    "fp8": PrecisionPolicy("fp8", 1, (Precision.FP8, Unit.TENSOR), (Precision.FP16, Unit.CUDA)),
    "int8": PrecisionPolicy("int8", 1, (Precision.INT8, Unit.TENSOR), (Precision.FP16, Unit.CUDA)),
    # torch.autocast: low-precision matmuls/convs, fp32 softmax/norms/reductions, casts between (amp.py);
    # these whole-network entries give the matmul unit and the storage of matmul operands
    "amp": PrecisionPolicy("amp", 2, (Precision.FP16, Unit.TENSOR), (Precision.FP32, Unit.CUDA), True),
    "amp-bf16": PrecisionPolicy("amp-bf16", 2, (Precision.BF16, Unit.TENSOR), (Precision.FP32, Unit.CUDA), True),
}
MIXED = ("amp", "amp-bf16")
# the uniform 16-bit precisions (a model.half() / .bfloat16() run) and their float dtype
UNIFORM_LOW_DTYPES = {"fp16": "float16", "bf16": "bfloat16"}
_MIXED_LOW = {"amp": "fp16", "amp-bf16": "bf16"}


def mixed_node_policies(name: str) -> tuple[PrecisionPolicy, PrecisionPolicy]:
    """(low, fp32) policies of the nodes of a mixed-precision graph: named like the uniform policies (so a
    fitted calibration applies its fp16/bf16 and fp32 parameters), with tensors at their own dtype."""
    from dataclasses import replace

    low = POLICIES[_MIXED_LOW[name]]
    return replace(low, natural_floats=True), replace(POLICIES["fp32"], natural_floats=True)


def policy(name: str) -> PrecisionPolicy:
    try:
        return POLICIES[name.lower().replace("_", "-")]
    except KeyError:
        raise PredictorError(
            f"unknown precision '{name}' (known: {', '.join(POLICIES)})") from None


def dtype_bytes(dtype: str) -> int:
    """Bytes per element of an ONNX dtype as stored in the file (no precision policy)."""
    return _DTYPE_BYTES.get(dtype, 4)
