"""Strided views that layer norms copy (predictor/strided_norms.py)."""
import numpy as np
from onnx import helper

from predictor.graph.context import STRIDED_INPUT, STRIDED_VIEW
from predictor.graph.loader import load_model_proto
from predictor.graph.opclass import hidden_key
from predictor.strided_norms import contiguous_strides, dense_like, is_contiguous, view_strides
from tests.helpers import make_model, prepared_costs

D, T = 8, 6


def _ln(x: str, y: str, name: str):
    return helper.make_node("LayerNormalization", [x, "g", "b"], [y], axis=-1, name=name)


def _speech_encoder(contiguous_reader: str | None = None):
    # a speech encoder's front: conv output (B, D, T) permuted to (B, T, D), a positional add, two residual blocks
    # each a layer norm, a projection and a residual add (whose first operand is the permuted stream)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1], name="conv"),
             helper.make_node("Transpose", ["c"], ["p"], perm=[0, 2, 1], name="permute"),
             helper.make_node("Add", ["p", "pos"], ["h0"], name="add_pos")]
    for i in range(2):
        nodes += [_ln(f"h{i}", f"n{i}", f"ln{i}"),
                  helper.make_node("MatMul", [f"n{i}", "wp"], [f"m{i}"], name=f"proj{i}"),
                  helper.make_node("Add", [f"h{i}", f"m{i}"], [f"h{i + 1}"], name=f"res{i}")]
    nodes.append(_ln("h2", "y", "ln_final"))
    if contiguous_reader == "MatMul":  # the permuted stream read by a GEMM too
        nodes.append(helper.make_node("MatMul", ["h0", "wp"], ["z"], name="side"))
    inits = {"w": np.zeros((D, 4, 3), np.float32), "pos": np.zeros((T, D), np.float32),
             "wp": np.zeros((D, D), np.float32), "g": np.ones(D, np.float32), "b": np.zeros(D, np.float32)}
    outs = [("y", "float32", None)] + ([("z", "float32", None)] if contiguous_reader else [])
    return load_model_proto(make_model(nodes, [("x", "float32", [2, 4, T])], outs, inits), batch=None)


def _gated(reader: str = "LayerNormalization"):
    # gMLP's spatial gating: chunk(2, -1), a layer norm of the second half, a product with the first
    nodes = [helper.make_node("Split", ["x", "split"], ["u", "v"], axis=2, name="chunk")]
    nodes += [_ln("v", "vn", "ln")] if reader == "LayerNormalization" else \
        [helper.make_node("MatMul", ["v", "wp"], ["vn"], name="proj")]
    nodes += [helper.make_node("Mul", ["u", "vn"], ["y"], name="gate")]
    inits = {"split": np.array([D, D], np.int64), "g": np.ones(D, np.float32), "b": np.zeros(D, np.float32),
             "wp": np.zeros((D, D), np.float32)}
    return load_model_proto(make_model(nodes, [("x", "float32", [2, T, 2 * D])], [("y", "float32", None)], inits),
                            batch=None)


def test_a_permuted_residual_stream_is_copied_by_every_layer_norm():
    nodes, costs = prepared_costs(_speech_encoder())
    assert nodes["permute"].attrs.get(STRIDED_VIEW) and costs["permute"].kernels == 0
    for ln in ("ln0", "ln1", "ln_final"):  # the residual adds keep their first operand's (permuted) strides
        assert nodes[ln].attrs.get(STRIDED_INPUT)
        assert hidden_key(nodes[ln]) == "LayerNormalization:strided"
    assert hidden_key(nodes["proj0"]) != "LayerNormalization:strided"


def test_a_permuted_stream_read_by_a_gemm_keeps_its_copy():
    nodes, costs = prepared_costs(_speech_encoder(contiguous_reader="MatMul"))
    assert not nodes["permute"].attrs.get(STRIDED_VIEW) and costs["permute"].kernels == 1
    assert all(nodes[ln].attrs.get(STRIDED_INPUT) for ln in ("ln0", "ln1", "ln_final"))


def test_a_last_axis_chunk_read_by_a_layer_norm_is_a_view_it_copies():
    nodes, costs = prepared_costs(_gated())
    assert nodes["chunk"].attrs.get(STRIDED_VIEW) and costs["chunk"].kernels == 0
    assert nodes["ln"].attrs.get(STRIDED_INPUT)
    assert not nodes["gate"].attrs.get(STRIDED_INPUT)


def test_a_chunk_read_by_a_gemm_is_left_alone():
    nodes, costs = prepared_costs(_gated(reader="MatMul"))
    assert not any(n.attrs.get(STRIDED_VIEW) or n.attrs.get(STRIDED_INPUT) for n in nodes.values())


def test_view_strides_follow_atens_compute_stride():
    # (B, T, D) permuted from (B, D, T) memory: merging B and T is not a view, splitting D is
    shp, st = (2, 6, 8), (48, 1, 6)
    assert view_strides(shp, st, (12, 8)) is None
    assert view_strides(shp, st, (2, 6, 2, 4)) == (48, 1, 24, 6)
    assert view_strides((2, 6, 8), contiguous_strides((2, 6, 8)), (12, 8)) == (8, 1)
    assert contiguous_strides((2, 3, 4)) == (12, 4, 1)
    assert is_contiguous((2, 1, 4), (4, 99, 1)) and not is_contiguous(shp, st)
    assert dense_like((2, 6, 8), (48, 1, 6)) == (48, 1, 6)
    assert dense_like((2, 6, 4), (96, 16, 1)) == (24, 4, 1)  # a slice's elementwise output is contiguous


def test_a_selected_head_of_a_fused_projection_is_a_strided_view():
    # Persimmon's q = qkv.view(B, S, H, 3, D)[..., 0, :] then a layer norm over D: select is a view
    nodes = [helper.make_node("Gather", ["x", "i"], ["q"], axis=2, name="select"), _ln("q", "y", "ln")]
    inits = {"i": np.array(0, np.int64), "g": np.ones(D, np.float32), "b": np.zeros(D, np.float32)}
    g = load_model_proto(make_model(nodes, [("x", "float32", [2, T, 3, D])], [("y", "float32", None)], inits),
                         batch=None)
    assert prepared_costs(g)[0]["ln"].attrs.get(STRIDED_INPUT)


def _patch_merge(source: str):
    # tokens (B, 16, C) made an NCHW image, a strided convolution, flattened and permuted back to tokens, a layer norm;
    # the image comes from a reshape of the tokens (``.contiguous()`` in the measured models: the convolution runs
    # NCHW and its flattened, permuted output is strided) or straight from a layer norm (a LayerNorm2d's permute back:
    # channels-last memory, an NHWC convolution, and the permuted output is contiguous)
    if source == "Reshape":
        nodes = [helper.make_node("Reshape", ["x", "hw"], ["img"], name="to_hw")]
    else:
        nodes = [_ln("x4", "img", "ln2d")]
    nodes += [helper.make_node("Transpose", ["img"], ["nchw"], perm=[0, 3, 1, 2], name="to_nchw"),
              helper.make_node("Conv", ["nchw", "w"], ["c"], strides=[2, 2], kernel_shape=[2, 2], name="merge"),
              helper.make_node("Reshape", ["c", "flat"], ["f"], name="flatten"),
              helper.make_node("Transpose", ["f"], ["t"], perm=[0, 2, 1], name="to_tokens"),
              _ln("t", "y", "ln")]
    inits = {"hw": np.array([2, 4, 4, D], np.int64), "flat": np.array([2, D, 4], np.int64),
             "w": np.zeros((D, D, 2, 2), np.float32), "g": np.ones(D, np.float32), "b": np.zeros(D, np.float32)}
    x = ("x", "float32", [2, 16, D]) if source == "Reshape" else ("x4", "float32", [2, 4, 4, D])
    return load_model_proto(make_model(nodes, [x], [("y", "float32", None)], inits), batch=None)


def test_tokens_made_an_image_are_copied_before_the_convolution():
    assert prepared_costs(_patch_merge("Reshape"))[0]["ln"].attrs.get(STRIDED_INPUT)


def test_a_layer_norms_permute_back_feeds_an_nhwc_convolution():
    nodes = prepared_costs(_patch_merge("LayerNormalization"))[0]
    assert not nodes["ln"].attrs.get(STRIDED_INPUT) and not nodes["to_tokens"].attrs.get(STRIDED_VIEW)
