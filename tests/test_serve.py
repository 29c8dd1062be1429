"""predictor/serve.py: prefill, decode, tokens/s, KV cache and what fits, from decoder graphs built here."""
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from predictor.cli import main
from predictor.graph.loader import load
from predictor.machine.profile import load_profile
from predictor.predict import predict_graph
from predictor.serve import mark_kv_appends, predict_serving
from predictor.train import memory as mem
from predictor.types import MemLevel

ROOT = Path(__file__).resolve().parents[1]


def _synth(tmp_path, layers=2, d=64, heads=4, seq=16):
    spec = importlib.util.spec_from_file_location("synth_transformer", ROOT / "benchmarks" / "synth_transformer.py")
    st = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("synth_transformer", st)
    spec.loader.exec_module(st)
    cfg = st.DecoderConfig(n_layers=layers, d_model=d, n_heads=heads, d_ff=128, vocab=256, seq=seq, dynamic_seq=True)
    path = tmp_path / "synth.onnx"
    onnx.save(st.build_decoder(cfg), str(path))
    return str(path)


def test_plain_graph_derives_the_kv_cache_and_decode(tmp_path):
    path = _synth(tmp_path)
    prof = load_profile("h200")
    sp = predict_serving(path, prof, "fp16", None, prompt=32, context=100, batches=(1, 8), contexts=(100,))
    assert sp.graph_kind == "prefill"
    assert (sp.kv.layers, sp.kv.kv_heads, sp.kv.head_dim) == (2, 4, 16)
    assert sp.kv_bytes_per_token == 2 * 2 * 4 * 16 * 2             # layers x K,V x heads x dim x fp16 = 512 B
    # decode = the graph at one token + the cache read at the HBM bandwidth
    one = predict_graph(load(path, batch=8, shapes={"input_ids": (8, 1)}), prof, "fp16", batch=8)
    p = sp.point(8, 100)
    assert abs(p.time_s - (one.total_time_s + 8 * 100 * 512 / prof.bandwidth(MemLevel.HBM))) < 1e-12
    assert p.tokens_per_s == 8 / p.time_s and p.kv_cache_bytes == 8 * 100 * 512
    usable = prof.memory_bytes - mem.CONTEXT_RESERVE_BYTES
    assert sp.max_batch[100] == int((usable - sp.weight_bytes) // (100 * 512))
    # prefill at the prompt length (the graph's 16 rebound to 32)
    pre = predict_graph(load(path, batch=1, shapes={"input_ids": (1, 32)}), prof, "fp16", batch=1)
    assert sp.prefill_s == pre.total_time_s and sp.prompt == 32


def _decode_graph(tmp_path):
    # one attention layer over a KV cache: 2 heads of 4; past [batch, 2, past, 4] -> present = Concat(past, new)
    inits = [numpy_helper.from_array(np.zeros((32, 8), np.float32), "embed"),
             numpy_helper.from_array(np.zeros((8, 8), np.float32), "wq"),
             numpy_helper.from_array(np.zeros((8, 8), np.float32), "wk"),
             numpy_helper.from_array(np.array([0, 0, 2, 4], np.int64), "hs")]
    nodes = [helper.make_node("Gather", ["embed", "input_ids"], ["x"]),
             helper.make_node("MatMul", ["x", "wq"], ["q0"]), helper.make_node("MatMul", ["x", "wk"], ["k0"]),
             helper.make_node("Reshape", ["q0", "hs"], ["q1"]), helper.make_node("Reshape", ["k0", "hs"], ["k1"]),
             helper.make_node("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3]),
             helper.make_node("Transpose", ["k1"], ["k"], perm=[0, 2, 1, 3]),
             helper.make_node("Concat", ["past_key_values.0.key", "k"], ["present.0.key"], axis=2, name="cat_k"),
             helper.make_node("Concat", ["past_key_values.0.value", "k"], ["present.0.value"], axis=2, name="cat_v"),
             helper.make_node("Transpose", ["present.0.key"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]), helper.make_node("Softmax", ["s"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "present.0.value"], ["o"])]
    ins = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", 1])]
    ins += [helper.make_tensor_value_info(f"past_key_values.0.{kv}", TensorProto.FLOAT, ["batch", 2, "past", 4])
            for kv in ("key", "value")]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("o", "present.0.key", "present.0.value")]
    m = helper.make_model(helper.make_graph(nodes, "dec", ins, outs, initializer=inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "decode.onnx"
    onnx.save(m, str(path))
    return str(path)


def test_decode_graph_binds_the_past_and_appends_in_place(tmp_path):
    path = _decode_graph(tmp_path)
    prof = load_profile("h200")
    sp = predict_serving(path, prof, "fp16", None, context=50, batches=(2,), contexts=(50,))
    assert sp.graph_kind == "decode" and (sp.kv.layers, sp.kv.kv_heads, sp.kv.head_dim) == (1, 2, 4)
    assert sp.kv_bytes_per_token == 1 * 2 * 2 * 4 * 2              # 32 B at fp16
    g = load(path, batch=2, shapes={"input_ids": (2, 1), "past_key_values.0.key": (2, 2, 50, 4),
                                    "past_key_values.0.value": (2, 2, 50, 4)})
    past = frozenset({"past_key_values.0.key", "past_key_values.0.value"})
    pred = predict_graph(mark_kv_appends(g, past), prof, "fp16", batch=2)
    assert sp.point(2, 50).time_s == pred.total_time_s
    cats = {o.cost.name: o.cost for o in pred.ops if o.cost.name in ("cat_k", "cat_v")}
    assert len(cats) == 2
    for c in cats.values():  # one copy of the new token: [2, 2, 1, 4] at fp16 = 32 B read and written
        assert (c.kernels, c.work.bytes_read, c.work.bytes_written) == (1, 32, 32)
    # the attention reads the cache ([2, 2, 51, 4] at fp16 = 1632 B a tensor) from HBM, not from an L2 the Concat
    # just wrote: the plain graph's Concats write 1632 B each and leave them resident
    plain = predict_graph(g, prof, "fp16", batch=2)
    hbm = lambda p: sum(o.cost.bytes[MemLevel.HBM] for o in p.ops if o.cost.name not in cats)
    assert hbm(pred) - hbm(plain) == 2 * 1632
    assert sp.prefill_s is None and any("not derivable" in n for n in sp.notes)


def test_cli_serve_json_and_errors(tmp_path, capsys):
    path = _synth(tmp_path)
    assert main(["serve", path, "--gpu", "h200", "--batches", "1,2", "--contexts", "64", "--context", "64",
                 "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kv_bytes_per_token"] == 512 and len(doc["decode"]) == 2 and doc["graph_kind"] == "prefill"
    assert main(["serve", path, "--gpu", "h200", "--batches", "0"]) == 2
    m = helper.make_model(helper.make_graph([helper.make_node("Relu", ["input_ids"], ["y"])], "g",
                                            [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, 4])],
                                            [helper.make_tensor_value_info("y", TensorProto.INT64, None)]))
    bad = tmp_path / "noattn.onnx"
    onnx.save(m, str(bad))
    assert main(["serve", str(bad), "--gpu", "h200"]) == 2
    assert "no attention found" in capsys.readouterr().err


def test_int4_weights_pack_every_matmul_weight(tmp_path):
    from predictor.weight_quant import quantise_weights

    path = _synth(tmp_path)
    g = load(path, batch=1, shapes={"input_ids": (1, 1)})
    q, count = quantise_weights(g, "int4")
    assert count == 2 * 7 + 1                       # q, k, v, o, gate, up, down per layer + the LM head
    nb = [n for n in q.nodes if n.op_type == "MatMulNBits"]
    gate = next(n for n in nb if n.name.endswith("layers.0/mlp/gate/MatMul"))
    # weight [64, 128]: K 64 = 2 blocks of 32, packed [128, 2, 16] uint8 = 4096 B (64 x 128 / 2)
    assert gate.inputs[1].shape == (128, 2, 16) and gate.attrs["bits"] == 4 and gate.attrs["K"] == 64
    assert gate.inputs[2].shape == (256,)          # one scale per block per output column
    sp4 = predict_serving(path, load_profile("h200"), "fp16", None, prompt=16, context=64, batches=(1,),
                          contexts=(64,), weights="int4")
    sp = predict_serving(path, load_profile("h200"), "fp16", None, prompt=16, context=64, batches=(1,),
                         contexts=(64,))
    assert sp4.weight_bytes < sp.weight_bytes and any("int4 MatMulNBits" in n for n in sp4.notes)


def test_stacked_past_inputs_of_older_exports():
    from predictor.serve import _Inputs, _kv_from_past, step_shapes

    inp = _Inputs("input_ids", ("batch", "seq"), (("past_0", (2, "batch", 12, "past_len", 64)),
                                                 ("past_1", (2, "batch", 12, "past_len", 64))), None, None)
    kv = _kv_from_past(inp)
    assert (kv.layers, kv.kv_heads, kv.head_dim) == (2, 12, 64)
    assert step_shapes(inp, 3, 1, 100)["past_0"] == (2, 3, 12, 100, 64)


def _synth_cfg(tmp_path, name, dynamic_seq, inline_weights=False, seq=16):
    spec = importlib.util.spec_from_file_location("synth_transformer", ROOT / "benchmarks" / "synth_transformer.py")
    st = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("synth_transformer", st)
    spec.loader.exec_module(st)
    cfg = st.DecoderConfig(n_layers=2, d_model=64, n_heads=4, d_ff=128, vocab=256, seq=seq, dynamic_seq=dynamic_seq)
    path = tmp_path / name
    onnx.save(st.build_decoder(cfg, inline_weights), str(path))
    return str(path)


def test_fixed_length_prefill_graph_is_rebound(tmp_path):
    """The same decoder exported at a fixed 16 tokens: serve re-binds its token input, so prefill at 32 tokens
    and decode at one token predict exactly what the dynamic export does."""
    prof = load_profile("h200")
    kw = dict(prompt=32, context=100, batches=(1, 8), contexts=(100,))
    dyn = predict_serving(_synth_cfg(tmp_path, "dyn.onnx", True), prof, "fp16", None, **kw)
    fixed = predict_serving(_synth_cfg(tmp_path, "fixed.onnx", False), prof, "fp16", None, **kw)
    assert fixed.prompt == 32 and fixed.prefill_s == dyn.prefill_s
    assert fixed.point(8, 100).time_s == dyn.point(8, 100).time_s
    assert any("re-bound to [batch, tokens]" in n for n in fixed.notes)


def test_fixed_length_graph_with_its_length_in_a_constant_is_refused(tmp_path):
    """A causal mask initializer of [1, 1, 16, 16] broadcasts any other length back to 16: one-line error."""
    import pytest

    from predictor.types import PredictorError

    path = _synth_cfg(tmp_path, "baked.onnx", False, inline_weights=True)
    with pytest.raises(PredictorError, match=r"sequence length 16 is built into its constants .* dynamic sequence"):
        predict_serving(path, load_profile("h200"), "fp16", None, prompt=32, batches=(1,), contexts=(64,),
                        context=64)


def _decoder_with_past(tmp_path, name, tokens, past, mask, baked_mask_len=None):
    """One attention layer (2 heads of 4) over a KV cache with an attention mask [batch, past + tokens], logits
    [batch, tokens, 32]; ``tokens`` / ``past`` / ``mask`` are the declared input dims (symbolic names or the fixed
    sizes of an export). ``baked_mask_len``: a fixed-size additive mask constant [1, 1, 1, L] on the scores."""
    f = np.float32
    inits = [numpy_helper.from_array(np.zeros((32, 8), f), "embed"),
             numpy_helper.from_array(np.zeros((8, 8), f), "wq"), numpy_helper.from_array(np.zeros((8, 8), f), "wk"),
             numpy_helper.from_array(np.zeros((8, 8), f), "wv"), numpy_helper.from_array(np.zeros((8, 32), f), "wo"),
             numpy_helper.from_array(np.array([0, 0, 2, 4], np.int64), "hs"),
             numpy_helper.from_array(np.array([0, 0, 8], np.int64), "ms"),
             numpy_helper.from_array(np.array([1, 2], np.int64), "ax"),
             numpy_helper.from_array(np.array(1.0, f), "one"), numpy_helper.from_array(np.array(-1e4, f), "big")]
    nodes = [helper.make_node("Gather", ["embed", "input_ids"], ["x"])]
    for w in ("q", "k", "v"):
        nodes += [helper.make_node("MatMul", ["x", f"w{w}"], [f"{w}0"]),
                  helper.make_node("Reshape", [f"{w}0", "hs"], [f"{w}1"]),
                  helper.make_node("Transpose", [f"{w}1"], [w], perm=[0, 2, 1, 3])]
    nodes += [helper.make_node("Concat", ["past_key_values.0.key", "k"], ["present.0.key"], axis=2),
              helper.make_node("Concat", ["past_key_values.0.value", "v"], ["present.0.value"], axis=2),
              helper.make_node("Transpose", ["present.0.key"], ["kt"], perm=[0, 1, 3, 2]),
              helper.make_node("MatMul", ["q", "kt"], ["s"]),
              helper.make_node("Cast", ["attention_mask"], ["mf"], to=TensorProto.FLOAT),
              helper.make_node("Unsqueeze", ["mf", "ax"], ["m4"]),
              helper.make_node("Sub", ["one", "m4"], ["inv"]), helper.make_node("Mul", ["inv", "big"], ["bias"]),
              helper.make_node("Add", ["s", "bias"], ["s1"])]
    scores = "s1"
    if baked_mask_len:
        inits.append(numpy_helper.from_array(np.zeros((1, 1, 1, baked_mask_len), f), "baked"))
        nodes.append(helper.make_node("Add", ["s1", "baked"], ["s2"]))
        scores = "s2"
    nodes += [helper.make_node("Softmax", [scores], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", "present.0.value"], ["o"]),
              helper.make_node("Transpose", ["o"], ["o1"], perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["o1", "ms"], ["o2"]), helper.make_node("MatMul", ["o2", "wo"], ["logits"])]
    ins = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, tokens),
           helper.make_tensor_value_info("attention_mask", TensorProto.INT64, mask)]
    ins += [helper.make_tensor_value_info(f"past_key_values.0.{kv}", TensorProto.FLOAT, past) for kv in ("key", "value")]
    fixed = all(isinstance(d, int) for d in (*tokens, *past))
    present = [past[0], 2, past[2] + tokens[1], 4] if fixed else None
    outs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [tokens[0], tokens[1], 32] if fixed else None)]
    outs += [helper.make_tensor_value_info(f"present.0.{kv}", TensorProto.FLOAT, present) for kv in ("key", "value")]
    m = helper.make_model(helper.make_graph(nodes, "dec", ins, outs, initializer=inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / name
    onnx.save(m, str(path))
    return str(path)


def test_fixed_past_decode_graph_is_rebound(tmp_path):
    """A decode-step graph exported at batch 2 with a fixed past of 8 (mask [2, 9]): serve re-binds the batch and
    the past length, so every decode point predicts exactly what the dynamic export does."""
    prof = load_profile("h200")
    kw = dict(context=100, batches=(1, 4), contexts=(50, 100))
    dyn = predict_serving(_decoder_with_past(tmp_path, "dyn.onnx", ["batch", 1], ["batch", 2, "past", 4],
                                             ["batch", "total"]), prof, "fp16", None, **kw)
    fixed = predict_serving(_decoder_with_past(tmp_path, "fixed.onnx", [2, 1], [2, 2, 8, 4], [2, 9]),
                            prof, "fp16", None, **kw)
    assert fixed.graph_kind == dyn.graph_kind == "decode" and fixed.kv == dyn.kv
    assert [(p.batch, p.context, p.time_s) for p in fixed.decode] == [(p.batch, p.context, p.time_s)
                                                                      for p in dyn.decode]
    assert len(fixed.decode) == 4 and fixed.decode_flops == dyn.decode_flops
    assert fixed.prefill_s is None and dyn.prefill_s is None   # a one-token graph: prefill not derived
    assert any("re-bound to the batch and past length" in n for n in fixed.notes)


def test_fixed_prefill_and_past_graph_is_rebound(tmp_path):
    """The graph exported at 4 tokens after a past of 8 (batch 1, mask [1, 12]): prefill at 32 tokens and decode
    at one token predict exactly what the export with dynamic batch, tokens and past does."""
    prof = load_profile("h200")
    kw = dict(prompt=32, context=64, batches=(1, 8), contexts=(64,))
    dyn = predict_serving(_decoder_with_past(tmp_path, "dyn.onnx", ["batch", "seq"], ["batch", 2, "past", 4],
                                             ["batch", "total"]), prof, "fp16", None, **kw)
    fixed = predict_serving(_decoder_with_past(tmp_path, "fixed.onnx", [1, 4], [1, 2, 8, 4], [1, 12]),
                            prof, "fp16", None, **kw)
    assert dyn.prefill_s is not None and fixed.prefill_s == dyn.prefill_s and fixed.prompt == 32
    assert fixed.prefill_flops == dyn.prefill_flops
    assert fixed.point(8, 64).time_s == dyn.point(8, 64).time_s and fixed.point(1, 64).time_s == dyn.point(1, 64).time_s


def test_fixed_past_graph_with_a_fixed_size_mask_constant_is_refused(tmp_path, capsys):
    """A mask constant [1, 1, 1, 9] holds the export's past + 1: any other past does not broadcast with it."""
    import pytest

    from predictor.types import PredictorError

    path = _decoder_with_past(tmp_path, "baked.onnx", [2, 1], [2, 2, 8, 4], [2, 9], baked_mask_len=9)
    with pytest.raises(PredictorError, match=r"batch and past length .* built into its constants .* dynamic batch "
                                             r"and past axes"):
        predict_serving(path, load_profile("h200"), "fp16", None, context=64, batches=(1,), contexts=(64,))
    assert main(["serve", path, "--gpu", "h200", "--batches", "1", "--contexts", "64", "--context", "64"]) == 2
    err = capsys.readouterr().err.strip()
    assert "built into its constants" in err and len(err.splitlines()) == 1


def test_rebinding_finds_the_axes_of_stacked_and_partly_fixed_past_inputs(tmp_path):
    """[2, batch, heads, past, dim] stacked K/V fixed at batch 2, past 8: the batch and past axes become symbolic,
    the K/V axis, heads and head size stay; a past with only its length fixed keeps its symbolic batch name."""
    from predictor.serve import _dims, _rebindable_decode, decoder_inputs

    ins = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [2, 1]),
           helper.make_tensor_value_info("past_0", TensorProto.FLOAT, [2, 2, 12, 8, 64]),
           helper.make_tensor_value_info("past_1", TensorProto.FLOAT, [2, "b", 12, 8, 64])]
    m = helper.make_model(helper.make_graph([helper.make_node("Identity", ["input_ids"], ["y"])], "g", ins,
                                            [helper.make_tensor_value_info("y", TensorProto.INT64, None)]))
    path = tmp_path / "stacked.onnx"
    onnx.save(m, str(path))
    src = _rebindable_decode(str(path), decoder_inputs(str(path)))
    dims = {vi.name: _dims(vi) for vi in src.graph.input}
    assert dims["input_ids"] == ("batch", 1)
    assert dims["past_0"] == (2, "batch", 12, "past_sequence", 64)
    assert dims["past_1"] == (2, "b", 12, "past_sequence", 64)
