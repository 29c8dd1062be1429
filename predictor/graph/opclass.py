"""Op classes: groups of op types that the same kind of GPU kernel runs, for calibration and charts."""
from __future__ import annotations

from ..precision import FLOAT_DTYPES
from .fused import FUSED_ELEMENTWISE, FUSED_NORM, FUSED_SOFTMAX, LAYOUT, NHWC
from .context import STRIDED_INPUT
from .registry import OP_CLASSES, op_traits

# op classes: each op type declares its own where its formula is registered (graph/registry.OpTraits.cls)
CLASSES = OP_CLASSES
# calibration classes (kernel_class): op classes + depthwise and grouped convolutions, layer norm
KERNEL_CLASSES = CLASSES + ("depthwise", "depthwise_large", "depthwise_nhwc", "grouped", "grouped_large", "layernorm", "gemm_unaligned", "gemm_thin", "gemv", "rnn_gemv",
                            "depthwise_grad", "norm_train", "norm_amp", "elementwise_mixed", "optimizer",
                            "elementwise_broadcast", "batchnorm")
# op type of a training step's depthwise-convolution backward kernels (PyTorch's own dgrad and wgrad kernels), class
# ``depthwise_grad`` (fitted on training steps: calibration/fit/train_fit.py)
DEPTHWISE_GRAD_OP = "DepthwiseConvGrad"
# Node.attrs key of a training step's multi-tensor optimizer kernel (predictor/train/optimizer.py): the tensors its
# launches walk; such a kernel is class ``optimizer`` (fitted on training steps: calibration/fit/optimizer_fit.py)
MULTI_TENSOR_ATTR = "multi_tensor_count"
# Node.attrs key of a training step's batch-norm backward kernels (predictor/train/rules/normalization.py): class
# ``norm`` (their reductions and apply passes), not the inference transform kernel's ``batchnorm``; their hidden
# kernels stay batch norm's (hidden_entry falls back to the op type)
BN_BACKWARD_ATTR = "bn_backward"


def op_class(op_type: str) -> str:
    """The class an op type declares at registration (graph/ops/); an op type with no formula, never costed, is
    charted as elementwise (registry.UNREGISTERED)."""
    return op_traits(op_type).cls


_SIXTEEN = ("float16", "bfloat16")
# kernel edge from which a depthwise convolution is keyed ``Conv:depthwise_large`` (class ``depthwise_large``): on the
# H200 cuDNN runs ConvNeXt's 7x7 depthwise as conv2d_c1_k1_nhwc plus a bias kernel (12 us at batch 1, fp16), and the
# 3x3/5x5 ones of MobileNet as conv2d_grouped_direct_kernel (2.6-4.4 us)
LARGE_DEPTHWISE = 7
# batch from which a grouped convolution is keyed ``Conv:grouped_batched``: the H200 microbenchmarks (batch 1 and 32
# only) show cuDNN's fp32 grouped convolution as one kernel per group at batch 32 and 1-5 kernels at batch 1
GROUPED_BATCH = 8
# kernel edge from which a grouped (not depthwise) convolution is keyed ``Conv:grouped_large`` (class ``grouped_large``,
# CUDA-core work: graph/ops/conv.py): the speech transformers' positional convolution (wav2vec2, WavLM: 128 taps, 16
# groups) runs on the H200 as cuDNN's implicit_convolve_sgemm, one kernel per group, at 1-2 TFLOP/s at fp32, fp16
# and bf16 (conv2d_grouped_direct_kernel at batch 1). Only 3x3 and 128-tap grouped convolutions were measured: the
# edge between them is a guess
LARGE_GROUPED = 16


def hidden_key(node, op: str | None = None) -> str:
    """Key of the hidden kernels (layout transforms, copies) the runtime adds around a node: the op type,
    refined where the runtime launches different programs (measured, see calibration/fit/fit.py):

    * Conv: ``Conv:pointwise`` (1x1, stride 1, one group: cuDNN runs it as a GEMM on NCHW, no transform),
      ``Conv:pointwise_strided``, ``Conv:depthwise`` (groups = input channels) or ``Conv:depthwise_large`` (kernel
      edge from LARGE_DEPTHWISE: other cuDNN kernels) or, on channels-last input (``LAYOUT = NHWC``: a permuted
      ConvNeXt block, predictor/layout_views.py, or the channels_last pass), ``Conv:depthwise_nhwc`` (cuDNN's
      conv2d_c1_k1_nhwc kernels: PyTorch sends every channels-last depthwise convolution to cuDNN), ``Conv:grouped`` (batch below
      GROUPED_BATCH) or ``Conv:grouped_batched`` (at fp32 cuDNN launches a kernel per group there) and
      ``Conv:spatial`` (kxk: input, weight and output transforms at 16-bit); a grouped one with a kernel edge from
      LARGE_GROUPED is ``Conv:grouped_large`` (CUDA-core kernels, one per group);
    * LSTM/GRU/RNN at batch 1: ``LSTM:gemv`` etc. (class ``rnn_gemv``: each recurrent step is a matrix-vector
      product, which cuBLAS runs as a GEMV kernel streaming the recurrent weights from L2 at fp32/tf32);
    * a linear layer with a tiny K or N (graph/ops/matmul.thin_linear_steps: CaiT's 4 x 4 talking-heads mixing,
      ConViT's 3 -> 4 positional projection): ``MatMul:thin`` (class ``gemm_thin``: cuBLAS's small-tile kernels, whose
      tile steps set the time; fitted on the linear_thin sweep by calibration/fit/thin_gemm_fit.py);
    * a linear layer of one row (MatMul or Gemm of a 1 x K activation, all leading dimensions 1, and a weight: a
      classifier head or a decoder step at batch 1): ``MatMul:gemv`` / ``Gemm:gemv`` (class ``gemv`` at fp32/tf32:
      cuBLAS's matrix-vector kernels, fitted on those kernels of the H200 and H100 kernel tables by
      calibration/fit/gemv_fit.py; at 16-bit its 8-row nvjet GEMM tiles, the op's GEMM class: GEMV_PRECISIONS);
    * MatMul (of two activations, or of an activation and a weight) whose K or N is not a multiple of 8 (Swin's
      49-token windows, gMLP's 196-token projection): ``MatMul:unaligned`` (cuBLAS falls back to ``align1``/``align2``
      CUTLASS kernels on tensor cores: 1.6-3.5x the aligned time on the H200);
    * BatchNormalization in training mode (batch statistics, a training step's forward): ``BatchNormalization:training``
      (class ``norm_train``: cuDNN's bn_fw_tr kernels, a thread block per channel walking its N x spatial elements:
      OpWork.channel_walk; fitted on training-mode forward kernel tables by calibration/fit/train_fit.py);
    * BatchNormalization with fp32 parameters on a 16-bit input (autocast): ``BatchNormalization:fp32_params``
      (class ``norm_amp``: at fp16 cuDNN's bn_fw_inf_1C11 kernel, a thread block per channel like the training
      kernels, OpWork.channel_walk; at bf16 PyTorch's native path; fitted on the training networks' autocast
      kernel tables by calibration/fit/amp_fit.py);
    * a training step's batch-norm backward kernel (BN_BACKWARD_ATTR): ``BatchNormalization:backward`` (class
      ``norm``); any other BatchNormalization is inference on a model of one dtype (class ``batchnorm``);
    * a layer norm reading a strided view (STRIDED_INPUT, predictor/strided_norms.py): ``LayerNormalization:strided``
      (its ``.contiguous()`` copy).
    ``op`` overrides the node's op type (a fused node's base op). A key with no fitted entry falls back to
    the op type."""
    op = op or node.op_type
    if op == "Conv":
        w = node.inputs[1] if len(node.inputs) > 1 else None
        x = node.inputs[0] if node.inputs else None
        if w is None or w.shape is None or len(w.shape) < 3:
            return op
        group = int(node.attrs.get("group", 1))
        cin = x.shape[1] if x is not None and x.shape is not None and len(x.shape) > 1 else None
        if group > 1:
            if cin is not None and group == cin:
                if node.attrs.get(LAYOUT) == NHWC:
                    return "Conv:depthwise_nhwc"
                return "Conv:depthwise_large" if max(w.shape[2:]) >= LARGE_DEPTHWISE else "Conv:depthwise"
            if is_large_grouped(w.shape):
                return "Conv:grouped_large"
            batch = x.shape[0] if x is not None and x.shape else 1
            return "Conv:grouped_batched" if isinstance(batch, int) and batch >= GROUPED_BATCH else "Conv:grouped"
        if all(k == 1 for k in w.shape[2:]):
            strides = tuple(node.attrs.get("strides", ()) or ())
            return "Conv:pointwise" if all(s == 1 for s in strides) else "Conv:pointwise_strided"
        return "Conv:spatial"
    if op_traits(op).recurrent and _rnn_batch(node) == 1:
        return f"{op}:gemv"
    if op == "MatMul" and _thin_linear(node):
        return "MatMul:thin"
    if op in ("MatMul", "Gemm") and _one_row_linear(node, op):
        return f"{op}:gemv"
    if op == "MatMul" and _unaligned_matmul(node):
        return "MatMul:unaligned"
    if op == "BatchNormalization" and int(node.attrs.get("training_mode", 0) or 0):
        return "BatchNormalization:training"
    if op == "BatchNormalization" and bn_fp32_params(node):
        return "BatchNormalization:fp32_params"
    if op == "BatchNormalization" and node.attrs.get(BN_BACKWARD_ATTR):
        return "BatchNormalization:backward"
    if op == "LayerNormalization" and node.attrs.get(STRIDED_INPUT):
        return "LayerNormalization:strided"
    return op


def is_large_grouped(w_shape) -> bool:
    """Whether a grouped convolution's weight ``[Cout, Cin/groups, k...]`` has a kernel edge of LARGE_GROUPED or more."""
    return len(w_shape) >= 3 and max(int(k) for k in w_shape[2:]) >= LARGE_GROUPED


def bn_fp32_params(node) -> bool:
    """A batch norm with fp32 parameters on a 16-bit input (autocast leaves batch norm's parameters in fp32)."""
    x, scale = (node.inputs + (None, None))[:2]
    return x is not None and scale is not None and x.dtype in _SIXTEEN and scale.dtype == "float32"


def hidden_entry(table, node, precision: str, default, op: str | None = None):
    """``table[key][precision]`` for the node's refined hidden_key, else for its op type, else ``default``
    (the one lookup the calibration and its fit share)."""
    op = op or node.op_type
    by_p = table.get(hidden_key(node, op))
    if by_p is None or precision not in by_p:
        by_p = table.get(op, {})
    return by_p.get(precision, default)


# precisions whose one-row linear layers run cuBLAS's gemv kernels (class ``gemv``); at 16-bit cuBLAS runs its GEMM
# kernels on 8-row tiles, which the op's GEMM class prices (the 16-bit kernels followed no gemv fit: 36% off)
GEMV_PRECISIONS = frozenset({"fp32", "tf32"})


def kernel_class(node, op: str | None = None, precision: str | None = None) -> str:
    """The calibration class of a node's kernel: its op class, except that a pointwise convolution (1x1,
    stride 1, one group) is a GEMM (cuDNN dispatches it to cuBLAS GEMM kernels, nvjet/sm90 gemm in the
    H200 kernel tables) and takes the GEMM class's efficiency, and depthwise and grouped convolutions are
    classes of their own (``depthwise``: CUDA-core stencil kernels, no implicit GEMM; ``grouped``: cuDNN's
    grouped kernels, fitted on microbenchmarks by calibration/fit/micro_fit.py), and so is layer norm
    (``layernorm``: a thread block per row, whose fixed cost per row the class's ``row_s`` holds, unlike batch
    norm's channel-parallel kernels), and products with K or N not a multiple of 8
    (``gemm_unaligned``: cuBLAS's align1 kernels, fitted on microbenchmarks), and elementwise ops on inputs of two
    float dtypes (``elementwise_mixed``, :func:`mixed_dtypes`) and those broadcasting a tensor over their output
    (``elementwise_broadcast``, :func:`broadcasts`), and inference batch norm (``batchnorm``: PyTorch's transform
    kernel for a 16-bit model, cuDNN's at fp32; a loop of dependent loads per thread, fitted on its kernels on two GPUs
    by calibration/fit/batchnorm_fit.py and held by the main fit). ``op``: a fused node's base op, or
    ``Attention`` for the runtime's fused attention kernel (graph/fused.runtime_op). A multi-tensor optimizer kernel
    of a training step (MULTI_TENSOR_ATTR) is class ``optimizer``. A one-row linear layer is class ``gemv`` at
    the GEMV_PRECISIONS only (``precision`` None: every precision)."""
    if node.attrs.get(MULTI_TENSOR_ATTR):
        return "optimizer"
    cls = _KEY_CLASS.get(hidden_key(node, op)) or op_class(op or node.op_type)
    if cls == "gemv" and precision is not None and precision not in GEMV_PRECISIONS:
        return op_class(op or node.op_type)
    if cls != "elementwise":
        return cls
    if mixed_dtypes(node):
        return "elementwise_mixed"
    return "elementwise_broadcast" if node.op_type not in OWN_INDEXING and broadcasts(node) else cls


# class-elementwise ops whose kernels index their inputs themselves, not through TensorIterator's stride-0 operand
# (interpolating gathers, scatters, scans, detection post-processing, losses, a compiler's fused kernels): inputs of
# other shapes are their design and not a broadcast
OWN_INDEXING = frozenset({"GridSample", "RoiAlign", "NonMaxSuppression", "DeformConv", "Scatter", "CumProd",
                          "TensorScatter", "LRN", "SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss",
                          FUSED_ELEMENTWISE, FUSED_NORM, FUSED_SOFTMAX})


def broadcasts(node) -> bool:
    """Whether an elementwise node reads a tensor of more than one element whose shape is not its output's (leading
    1s aside): PyTorch's TensorIterator then has a stride-0 operand and runs its generic ``elementwise_kernel`` with
    an offset per element, not the vectorised one (the H200 kernel tables, adds and multiplies of 4M+ elements:
    1.4 TB/s at fp16 and 2.5 at fp32 broadcast, 4.2-4.3 vectorised). Ignores: strided same-shape inputs (views the
    graph does not show), which take the same generic kernel."""
    outs = node.outputs
    if len(node.inputs) < 2 or not outs or outs[0].shape is None:
        return False
    out = _squeezed(outs[0].shape)
    for t in node.inputs:
        if t is not None and t.shape is not None and (t.numel is None or t.numel > 1) and _squeezed(t.shape) != out:
            return True
    return False


def _squeezed(shape) -> tuple:
    """``shape`` without its leading 1s."""
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return tuple(shape[k:])


def mixed_dtypes(node) -> bool:
    """Whether a node's activation inputs (tensors of more than one element, no weights) come in two float dtypes
    (autocast's fp32 residual stream plus a 16-bit branch): PyTorch then runs its casting elementwise kernel, not the
    vectorised one (class ``elementwise_mixed``: 2.7-2.9 TB/s against 4.1-4.3 in one dtype on the H200)."""
    dtypes = {t.dtype for t in node.inputs if t is not None and not t.is_initializer and t.dtype in FLOAT_DTYPES
              and (t.numel is None or t.numel > 1)}
    return len(dtypes) > 1


_KEY_CLASS = {"Conv:pointwise": "gemm", "Conv:depthwise": "depthwise", "Conv:depthwise_large": "depthwise_large",
              "Conv:depthwise_nhwc": "depthwise_nhwc",
              "Conv:grouped": "grouped",
              "Conv:grouped_batched": "grouped", "Conv:grouped_large": "grouped_large",
              "LayerNormalization": "layernorm", "RMSNormalization": "layernorm", "MatMul:unaligned": "gemm_unaligned",
              "MatMul:thin": "gemm_thin", "MatMul:gemv": "gemv", "Gemm:gemv": "gemv",
              "LSTM:gemv": "rnn_gemv", "GRU:gemv": "rnn_gemv", "RNN:gemv": "rnn_gemv",
              DEPTHWISE_GRAD_OP: "depthwise_grad", "BatchNormalization:training": "norm_train",
              "BatchNormalization:fp32_params": "norm_amp", "BatchNormalization": "batchnorm",
              "BatchNormalization:backward": "norm"}

ALIGN_ELEMENTS = 8  # 16 bytes of 16-bit elements: what cuBLAS's vectorised tensor-core kernels need


def _rnn_batch(node) -> int | None:
    """The batch of a recurrent layer's input X: [S, B, I] (``layout`` 0) or [B, S, I] (``layout`` 1)."""
    x = node.inputs[0] if node.inputs else None
    if x is None or x.shape is None or len(x.shape) != 3:
        return None
    return x.shape[0] if int(node.attrs.get("layout", 0) or 0) == 1 else x.shape[1]


def _operand_shapes(node) -> tuple[tuple, tuple] | None:
    """The shapes of a product's two operands when both are known to the last dimension, else None."""
    if len(node.inputs) < 2 or any(t is None or not t.shape for t in node.inputs[:2]):
        return None
    a, b = node.inputs[0].shape, node.inputs[1].shape
    return None if any(not isinstance(d, int) for d in (*a, *b)) else (a, b)


def _one_row_linear(node, op: str) -> bool:
    """A linear layer of one row: an activation whose every dimension but the last is 1 times a weight (MatMul), or
    a Gemm of a weight with one row of op(A)."""
    if _operand_shapes(node) is None:
        return False
    a, w = node.inputs[0], node.inputs[1]
    if not w.is_initializer or a.is_initializer:
        return False
    if op == "Gemm":
        return len(a.shape) == 2 and a.shape[1 if int(node.attrs.get("transA", 0) or 0) else 0] == 1
    return len(w.shape) == 2 and len(a.shape) >= 1 and all(d == 1 for d in a.shape[:-1])


def _thin_linear(node) -> bool:
    """A linear layer (an activation times a weight) with a tiny K or N: graph/ops/matmul.thin_linear_steps."""
    shapes = _operand_shapes(node)
    if shapes is None:
        return False
    a, b = shapes
    from .ops.matmul import matmul_gemm, thin_linear_steps

    return thin_linear_steps(matmul_gemm(a, b)[0], node.inputs[1].is_initializer) > 0


def _unaligned_matmul(node) -> bool:
    """A MatMul whose K (A's last dim) or N (B's last dim) is not a multiple of ALIGN_ELEMENTS: a batched product of
    two activations (Swin's 49-token windows), or an activation times a weight (gMLP's and MLP-Mixer's 196-token
    projections, CaiT's 4x4 talking-heads mixing; taken into the class on the training networks: training MAPE
    14.0% -> 13.6%, held-out 11.0% -> 10.7%). Ignores: tf32 needs only 4 (a dim of 4 mod 8 is counted unaligned there);
    how far below 8 the alignment falls (align2 and align1 kernels are one class)."""
    if len(node.inputs) < 2 or any(t is None or t.shape is None for t in node.inputs[:2]):
        return False
    a, b = node.inputs[0], node.inputs[1]
    rank = 2 if b.is_initializer else 3  # a linear layer, or a batched product of activations
    if a.is_initializer or len(a.shape) < rank or len(b.shape) < rank:
        return False
    return a.shape[-1] % ALIGN_ELEMENTS != 0 or b.shape[-1] % ALIGN_ELEMENTS != 0
