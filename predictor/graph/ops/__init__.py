"""Per-op cost formulas, one module per op family; importing this package registers them all."""
from . import (  # noqa: F401  (imported for their @register side effects)
    attention,
    conv,
    data_movement,
    elementwise,
    matmul,
    normalization,
    pooling,
    reduction,
    resize,
    rnn,
    shape_ops,
    softmax,
)
