"""Per-op cost formulas, one module per op family; importing this package registers them all.

Every family registers through ``_common.register``, which adds the two load-time rules (nodes computed
only from initializers are folded: free; ``weight_bytes`` = bytes read from initializer inputs) and
formulas read attributes with ``_common.attr`` (schema defaults from ``_schema_defaults``, no onnx import).
"""
from . import (  # noqa: F401  (imported for their @register side effects)
    amp_cast,
    attention,
    conv,
    data_movement,
    detection,
    elementwise,
    fused,
    llm,
    loss,
    matmul,
    normalization,
    pooling,
    quant,
    reduction,
    resize,
    rnn,
    shape_ops,
    softmax,
    spectral,
)
