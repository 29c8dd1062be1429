"""Kernel classification by name.

`CATEGORY_RULES` is an ordered table of (category, regex) searched in the demangled kernel name; the first match
wins. The order carries meaning: specific library kernels (cuDNN batch-norm, layout transforms, PyTorch fill/copy
functors) come before the broad 'elementwise' and 'cudnn' patterns that would also match them.
"""
from __future__ import annotations

import re
from enum import Enum


class KernelCategory(str, Enum):
    GEMM = "gemm"               # GEMM, convolution (implicit GEMM, Winograd, FFT), GEMV
    ATTENTION = "attention"     # fused attention (flash, memory-efficient, cuDNN/cutlass fmha)
    RNN = "rnn"                 # cuDNN RNN cells and persistent kernels
    LAYOUT = "layout"           # NCHW <-> NHWC, transposes
    NORM = "norm"               # batch/layer/group/instance/RMS normalisation
    SOFTMAX = "softmax"
    POOLING = "pooling"
    UPSAMPLE = "upsample"       # interpolation / resize
    CAT = "cat"
    INDEX = "index"             # gather, index_select, embedding, scatter
    REDUCE = "reduce"           # reductions, split-K reductions
    FILL = "fill"
    COPY = "copy"               # copies and dtype casts
    ELEMENTWISE = "elementwise"
    MEMSET = "memset"
    OTHER = "other"


_C = KernelCategory
_I = re.IGNORECASE
# Ordered: first match wins (see the module docstring).
CATEGORY_RULES: tuple[tuple[KernelCategory, re.Pattern[str]], ...] = (
    (_C.MEMSET, re.compile(r"memset", _I)),
    (_C.ATTENTION, re.compile(r"flash_fwd|flash::|flash_attn|fmha|efficient_attention|attention_kernel"
                              r"|mem_eff|sdpa", _I)),
    (_C.GEMM, re.compile(r"nvjet|xmma|cutlass|gemm|gemv|implicit_convolve|winograd|fft\w*conv"
                         r"|^(void )?(ampere|sm\d\d|volta|turing|hopper)_", _I)),
    (_C.RNN, re.compile(r"lstm|gru_cell|elemWiseRNN|RNN_|rnn_", _I)),
    (_C.LAYOUT, re.compile(r"nchwToNhwc|nhwcToNchw|transpose|permute|nchw_to_nhwc|nhwc_to_nchw", _I)),
    (_C.NORM, re.compile(r"batch_?norm|bn_fw|bn_bw|cudnn::bn|layer_?norm|group_?norm|instance_?norm"
                         r"|rms_?norm|RowwiseMoments|welford", _I)),
    (_C.SOFTMAX, re.compile(r"softmax", _I)),
    (_C.POOLING, re.compile(r"max_?pool|avg_?pool|pooling", _I)),
    (_C.UPSAMPLE, re.compile(r"upsample|interpolat|resize|bilinear|nearest", _I)),
    (_C.CAT, re.compile(r"CatArray|\bcat_|concat", _I)),
    (_C.INDEX, re.compile(r"index_?select|indexSelect|index_kernel|gather|scatter|embedding|take_kernel", _I)),
    (_C.REDUCE, re.compile(r"reduce|splitK|reduction", _I)),
    (_C.FILL, re.compile(r"FillFunctor|fill_kernel|\bfill_", _I)),
    (_C.COPY, re.compile(r"copy|cast|convert", _I)),
    (_C.ELEMENTWISE, re.compile(r"elementwise|elemwise|pointwise|vectorized|unrolled", _I)),
    (_C.GEMM, re.compile(r"cudnn|conv", _I)),
)


def classify(name: str) -> KernelCategory:
    """Category of a (demangled) kernel name; OTHER when no rule matches."""
    for category, pattern in CATEGORY_RULES:
        if pattern.search(name):
            return category
    return KernelCategory.OTHER
