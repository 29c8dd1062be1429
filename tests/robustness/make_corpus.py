"""Write the committed corpus of bad inputs (tests/robustness/corpus/), deterministically.

    python -m tests.robustness.make_corpus          # rewrite the corpus
    python -m tests.robustness.make_corpus --check  # fail when the committed corpus differs

Every case is a small file plus an entry in ``corpus/MANIFEST.json``::

    "onnx/cycle.onnx": {"kind": "onnx", "expect": "error", "why": "..."}

kinds: ``onnx`` (``predict FILE --gpu h200``), ``profile`` (``predict MODEL --gpu FILE``),
``calibration`` (``predict MODEL --gpu h200 --calibration FILE``), ``ncu``
(``predict validate examples/lstm.onnx --gpu h200 --ncu FILE``). expect: ``error`` (one-line ``error: ...``
and exit 2), ``unsupported`` (exit 0, the op named in ``unsupported``), ``any`` (either a normal
result or a one-line error: bit flips may leave a valid model), ``unmapped`` (ncu only: the CSV parses,
through the reader ``predict validate`` uses, into kernels whose time is ``time_s``; being of another
network than the LSTM, none of its kernels maps to a node, which is a one-line error, not a comparison). Files too big to commit (a profile over
1 MB, a CSV field over the csv module's limit) are built by the test itself, see test_corpus.py.
Paths stored inside the files (external data, raw_data notes) point at ``../../etc/passwd`` and other
places outside; the test checks that none of them is ever opened.
"""
from __future__ import annotations

import csv
import io
import json
import random
import shutil
import sys
from pathlib import Path

import onnx
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"
EXAMPLES = ROOT / "examples"
FLOAT, INT64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL

OUTSIDE_PATHS = ("../../etc/passwd", "/etc/passwd", "../outside_secret.bin")


# ------------------------------------------------------------------------------------------ helpers
def vi(name, elem=FLOAT, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset=17, extra_opsets=(), functions=()) -> onnx.ModelProto:
    g = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops, functions=list(functions))
    m.ir_version = 8
    return m


def tensor(name, dims, elem=FLOAT, raw=b"", external=None) -> onnx.TensorProto:
    t = TensorProto()
    t.name, t.data_type = name, elem
    t.dims.extend(dims)
    if raw:
        t.raw_data = raw
    if external is not None:
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", external), ("offset", "0"), ("length", "64")):
            e = t.external_data.add()
            e.key, e.value = k, v
    return t


def _ld(field: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (used to nest deeper than the protobuf library will build)."""
    def varint(v):
        out = bytearray()
        while True:
            b, v = v & 0x7F, v >> 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)
    return varint((field << 3) | 2) + varint(len(payload)) + payload


def deep_if_bytes(depth: int) -> bytes:
    """``If`` nodes nested ``depth`` deep in then_branch (else_branch a leaf), wire-encoded by hand."""
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["z"])], "leaf", [], [vi("z", FLOAT, [4])])
    inner = helper.make_graph([helper.make_node("Identity", ["x"], ["y0"])], "g0", [], [vi("y0", FLOAT, [4])])
    inner_b = inner.SerializeToString()
    else_attr = helper.make_attribute("else_branch", leaf).SerializeToString()
    for d in range(1, depth + 1):
        then_attr = helper.make_attribute("then_branch", leaf)
        then_attr.ClearField("g")
        attr_b = then_attr.SerializeToString() + _ld(6, inner_b)
        node_b = helper.make_node("If", ["c"], [f"y{d}"]).SerializeToString() + _ld(5, attr_b) + _ld(5, else_attr)
        if d == depth:
            top = helper.make_graph([], "top", [vi("c", BOOL, []), vi("x", FLOAT, [4])], [vi(f"y{d}", FLOAT, [4])])
            graph_b = top.SerializeToString() + _ld(1, node_b)
        else:
            graph_b = helper.make_graph([], f"g{d}", [], [vi(f"y{d}", FLOAT, [4])]).SerializeToString() \
                + _ld(1, node_b)
        inner_b = graph_b
    m = helper.make_model(helper.make_graph([], "", [], []), opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    m.ClearField("graph")
    return m.SerializeToString() + _ld(7, inner_b)


def deep_loop_bytes(depth: int) -> bytes:
    """``Loop`` bodies nested ``depth`` deep, wire-encoded by hand."""
    body_io = ([vi("i", INT64, []), vi("c_in", BOOL, [])], [vi("c_out", BOOL, [])])
    inner_b = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"])], "b0", *body_io).SerializeToString()
    for d in range(1, depth + 1):
        body_attr = helper.make_attribute("body", helper.make_graph([], "x", [], []))
        body_attr.ClearField("g")
        loop_b = helper.make_node("Loop", ["trip", "cond"], []).SerializeToString() \
            + _ld(5, body_attr.SerializeToString() + _ld(6, inner_b))
        if d == depth:
            top = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "top",
                                    [vi("trip", INT64, []), vi("cond", BOOL, []), vi("x", FLOAT, [4])],
                                    [vi("y", FLOAT, [4])])
            inner_b = top.SerializeToString() + _ld(1, loop_b)
        else:
            body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"])], f"b{d}", *body_io)
            inner_b = body.SerializeToString() + _ld(1, loop_b)
    m = helper.make_model(helper.make_graph([], "", [], []), opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    m.ClearField("graph")
    return m.SerializeToString() + _ld(7, inner_b)


def deep_if_proto(depth: int) -> onnx.ModelProto:
    """Nested ``If`` shallow enough for protobuf to parse (each level is 3 message levels)."""
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["z"])], "leaf", [], [vi("z", FLOAT, [4])])
    inner = helper.make_graph([helper.make_node("Identity", ["x"], ["y0"])], "g0", [], [vi("y0", FLOAT, [4])])
    for d in range(1, depth):
        node = helper.make_node("If", ["c"], [f"y{d}"], then_branch=inner, else_branch=leaf)
        inner = helper.make_graph([node], f"g{d}", [], [vi(f"y{d}", FLOAT, [4])])
    top = helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=leaf)
    return model([top], [vi("c", BOOL, []), vi("x", FLOAT, [4])], [vi("y", FLOAT, [4])])


def relu_chain(inputs=None, init=(), out_shape=None):
    return model([helper.make_node("Relu", ["x"], ["y"])], inputs or [vi("x", FLOAT, [2, 3])],
                 [vi("y", FLOAT, out_shape)], init)


def csv_text(rows) -> str:
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _mutated(base, path, value, delete=False):
    """A deep copy of the JSON document ``base`` with the entry at ``path`` set to ``value`` (or deleted)."""
    doc = json.loads(json.dumps(base))
    cur = doc
    for key in path[:-1]:
        cur = cur[key]
    if delete:
        del cur[path[-1]]
    else:
        cur[path[-1]] = value
    return doc


# ------------------------------------------------------------------------------------------ cases
# cases that still fail for a reason outside this suite's files: the test marks them xfail while they do
PENDING: dict[str, str] = {}
# errors found after the graph loads (by the prediction's checks), not by the loader
AFTER_LOAD = frozenset({"onnx/mostly_unknown_shapes.onnx"})
# extra command-line arguments of a case (after FILE --gpu h200 --format json -o OUT)
ARGS: dict[str, list[str]] = {
    "onnx/cast_to_graph_amp.onnx": ["--precision", "amp"],
    "onnx/init_dim_2p40_train.onnx": ["--mode", "train"],
    "onnx/conv_dims_2p40_train.onnx": ["--mode", "train"],
    "onnx/fixed_batch_shape_contradicts.onnx": ["--shape", "input_ids=4,1024"],
    "onnx/fixed_batch_batch_contradicts.onnx": ["--batch", "4"],
    "onnx/mostly_unknown_shapes_allowed.onnx": ["--allow-partial"],
}


def onnx_cases(rng: random.Random) -> dict[str, tuple[bytes, str, str]]:
    """name -> (bytes, expect, why)."""
    out: dict[str, tuple[bytes, str, str]] = {}

    def add(name, data, expect, why):
        if isinstance(data, onnx.ModelProto):
            data = data.SerializeToString()
        out[name] = (data, expect, why)

    resnet = (EXAMPLES / "resnet50.onnx").read_bytes()
    lstm = (EXAMPLES / "lstm.onnx").read_bytes()
    # random bytes
    add("random_1.onnx", b"\x08", "error", "one byte: a ModelProto with only ir_version")
    for k, n in enumerate((16, 200, 3000)):
        add(f"random_{n}.onnx", rng.randbytes(n), "error", f"{n} random bytes")
    add("text.onnx", b"this is not an onnx model\n" * 10, "error", "plain text")
    add("zeros.onnx", bytes(512), "error", "NUL bytes (field number 0)")
    add("varint_overlong.onnx", b"\x3a" + b"\xff" * 12, "error", "graph field with an over-long length varint")
    add("length_huge.onnx", b"\x3a\xff\xff\xff\xff\x0f" + b"\x00" * 8, "error", "graph field claims 4 GiB")
    # truncations
    for frac in (0.05, 0.5, 0.95):
        cut = int(len(lstm) * frac)
        add(f"lstm_trunc_{cut}.onnx", lstm[:cut], "error", f"lstm.onnx cut at byte {cut}")
    add(f"lstm_trunc_{len(lstm) - 1}.onnx", lstm[:-1], "error", "lstm.onnx less its last byte")
    for cut in (1000, 20000):
        add(f"resnet50_trunc_{cut}.onnx", resnet[:cut], "error", f"resnet50.onnx cut at byte {cut}")
    # bit flips (a flipped file may still be a valid model: any outcome but a crash)
    for k in range(10):
        b = bytearray(lstm)
        for _ in range(1 + k % 4):
            pos = rng.randrange(len(b))
            b[pos] ^= 1 << rng.randrange(8)
        add(f"lstm_flip_{k}.onnx", bytes(b), "any", "lstm.onnx with 1-4 flipped bits")
    for k in range(1):
        b = bytearray(resnet)
        for _ in range(8):
            pos = rng.randrange(len(b))
            b[pos] ^= 1 << rng.randrange(8)
        add(f"resnet50_flip_{k}.onnx", bytes(b), "any", "resnet50.onnx with 8 flipped bits")
    b = bytearray(lstm)
    for pos in range(0, len(b), 97):
        b[pos] = rng.randrange(256)
    add("lstm_scrambled.onnx", bytes(b), "any", "lstm.onnx with every 97th byte replaced")

    # graph structure
    add("empty_graph.onnx", model([], [vi("x", FLOAT, [2])], [vi("x", FLOAT, [2])]), "error", "no nodes")
    no_graph = helper.make_model(helper.make_graph([], "g", [], []), opset_imports=[helper.make_opsetid("", 17)])
    no_graph.ClearField("graph")
    add("no_graph.onnx", no_graph, "error", "a ModelProto without a graph")
    add("no_outputs.onnx", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", FLOAT, [2])], []),
        "error", "no graph outputs")
    add("no_opset.onnx", helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                                                             [vi("x", FLOAT, [2])], [vi("y", FLOAT, [2])]),
                                           opset_imports=[]), "error", "no opset import")
    add("opset_huge.onnx", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", FLOAT, [2])],
                                 [vi("y", FLOAT, [2])], opset=2**40), "error", "default opset 2**40")
    add("opset_zero.onnx", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", FLOAT, [2])],
                                 [vi("y", FLOAT, [2])], opset=0), "any", "default opset 0 (read as absent)")
    add("cycle.onnx", model([helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
                             helper.make_node("Add", ["x", "b"], ["y"])],
                            [vi("x", FLOAT, [2])], [vi("y", FLOAT, [2])]), "error", "a two-node cycle")
    add("self_loop.onnx", model([helper.make_node("Add", ["x", "y"], ["y"])], [vi("x", FLOAT, [2])],
                                [vi("y", FLOAT, [2])]), "error", "a node reading its own output")
    add("dangling_input.onnx", model([helper.make_node("Add", ["x", "ghost"], ["y"])], [vi("x", FLOAT, [2])],
                                     [vi("y", FLOAT, [2])]), "error", "reads a tensor nothing produces")
    add("dangling_output.onnx", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", FLOAT, [2])],
                                      [vi("nowhere", FLOAT, [2])]), "any", "graph output nothing produces")
    add("duplicate_producer.onnx", model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"])],
                                         [vi("x", FLOAT, [2])], [vi("y", FLOAT, [2])]),
        "any", "two nodes write the same tensor")
    add("input_no_type.onnx", model([helper.make_node("Relu", ["x"], ["y"])],
                                    [helper.make_value_info("x", onnx.TypeProto())], [vi("y", FLOAT, [2])]),
        "error", "graph input without a type")
    add("input_sequence_type.onnx", model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_value_info("x", helper.make_sequence_type_proto(helper.make_tensor_type_proto(FLOAT, [2])))],
        [vi("y", FLOAT, [2])]), "unsupported:Relu (sequence value)",
        "graph input of sequence type (accepted: the op reading it is named, not costed)")
    add("elem_type_999.onnx", relu_chain(inputs=[vi("x", 999, [2, 3])]), "any", "element type 999")
    add("empty_names.onnx", model([helper.make_node("Relu", [""], [""])], [vi("x", FLOAT, [2])],
                                  [vi("x", FLOAT, [2])]), "any", "a node with empty input and output names")

    # dimensions
    add("input_dim_negative.onnx", relu_chain(inputs=[vi("x", FLOAT, [2, -5])]), "error", "input dim -5")
    add("input_dim_negative_lead.onnx", relu_chain(inputs=[vi("x", FLOAT, [-5, 3])]), "error", "leading input dim -5")
    add("input_dim_minus1_lead.onnx", relu_chain(inputs=[vi("x", FLOAT, [-1, 3])]), "any",
        "leading input dim -1 (a dynamic batch for some exporters: bound by --batch)")
    add("input_dim_zero.onnx", relu_chain(inputs=[vi("x", FLOAT, [2, 0])]), "ok",
        "input dim 0 past the leading axis: an empty tensor (no kernel)")
    add("input_dim_2p40.onnx", relu_chain(inputs=[vi("x", FLOAT, [2**40 + 1, 2])]), "error", "input dim 2**40+1")
    add("input_dims_overflow.onnx", relu_chain(inputs=[vi("x", FLOAT, [2**40] * 4)]), "any",
        "input dims 2**40 x4: numel 2**160 overflows int64")
    add("input_rank_1000.onnx", relu_chain(inputs=[vi("x", FLOAT, [2] * 1000)]), "any", "rank 1000 input")
    mm = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    add("init_dim_negative.onnx", model(mm, [vi("x", FLOAT, [2, 3])], [vi("y", FLOAT, None)],
                                        [tensor("w", [3, -4])]), "any", "initializer dims (3, -4)")
    add("init_dim_zero.onnx", model(mm, [vi("x", FLOAT, [2, 3])], [vi("y", FLOAT, None)],
                                    [tensor("w", [3, 0])]), "any", "initializer dims (3, 0)")
    add("init_dim_2p40.onnx", model(mm, [vi("x", FLOAT, [2, 2**40])], [vi("y", FLOAT, None)],
                                    [tensor("w", [2**40, 2**40])]), "any", "initializer dims 2**40 (no data)")
    add("init_dims_overflow.onnx", model(mm, [vi("x", FLOAT, [2, 2**40])], [vi("y", FLOAT, None)],
                                         [tensor("w", [2**40, 2**40, 2**40, 2**40])]), "any",
        "initializer numel 2**160")
    add("init_dim_int64_max.onnx", model(mm, [vi("x", FLOAT, [2, 3])], [vi("y", FLOAT, None)],
                                         [tensor("w", [2**63 - 1, 2**63 - 1])]), "any", "initializer dims int64 max")
    add("init_raw_wrong_size.onnx", model([helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", FLOAT, [2, 3])],
                                          [vi("y", FLOAT, None)], [tensor("s", [2], INT64, raw=b"\x01\x02\x03")]),
        "any", "shape initializer whose raw_data is 3 bytes")
    add("init_raw_odd_fp16.onnx", model([helper.make_node("Add", ["x", "c"], ["y"])], [vi("x", TensorProto.FLOAT16, [3])],
                                        [vi("y", TensorProto.FLOAT16, None)],
                                        [tensor("c", [3], TensorProto.FLOAT16, raw=b"\x01\x02\x03")]),
        "any", "fp16 initializer with an odd number of raw bytes")
    fp16_bits = helper.make_tensor("c", TensorProto.FLOAT16, [2], [0.0, 0.0])
    fp16_bits.ClearField("int32_data")
    fp16_bits.int32_data.extend([70000, -3])
    add("init_fp16_bits_out_of_range.onnx", model([helper.make_node("Add", ["x", "c"], ["y"])],
                                                  [vi("x", TensorProto.FLOAT16, [2])], [vi("y", TensorProto.FLOAT16, None)],
                                                  [fp16_bits]), "any", "fp16 int32_data holding 70000 and -3")
    add("reshape_huge.onnx", model([helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", FLOAT, [2, 3])],
                                   [vi("y", FLOAT, None)],
                                   [helper.make_tensor("s", INT64, [3], [2**40, 2**40, 2**40])]),
        "any", "Reshape to 2**40 x 2**40 x 2**40")
    add("constantofshape_huge.onnx", model([helper.make_node("ConstantOfShape", ["s"], ["y"])], [],
                                           [vi("y", FLOAT, None)],
                                           [helper.make_tensor("s", INT64, [2], [2**31, 2**31])]),
        "any", "ConstantOfShape of 2**62 elements (must not be materialised)")
    add("expand_huge.onnx", model([helper.make_node("Expand", ["x", "s"], ["y"])], [vi("x", FLOAT, [1])],
                                  [vi("y", FLOAT, None)], [helper.make_tensor("s", INT64, [3], [2**40, 2**40, 7])]),
        "any", "Expand to 2**80 elements")
    add("range_huge.onnx", model([helper.make_node("Range", ["a", "b", "d"], ["y"])], [], [vi("y", INT64, None)],
                                 [helper.make_tensor("a", INT64, [], [0]), helper.make_tensor("b", INT64, [], [2**62]),
                                  helper.make_tensor("d", INT64, [], [1])]), "any", "Range of 2**62 values")
    add("range_zero_step.onnx", model([helper.make_node("Range", ["a", "b", "d"], ["y"])], [], [vi("y", INT64, None)],
                                      [helper.make_tensor("a", INT64, [], [0]), helper.make_tensor("b", INT64, [], [10]),
                                       helper.make_tensor("d", INT64, [], [0])]), "any", "Range with step 0")
    add("tile_huge.onnx", model([helper.make_node("Tile", ["x", "r"], ["y"])], [vi("x", FLOAT, [4, 4])],
                                [vi("y", FLOAT, None)], [helper.make_tensor("r", INT64, [2], [2**40, 2**40])]),
        "any", "Tile by 2**40 x 2**40")
    add("conv_huge.onnx", model([helper.make_node("Conv", ["x", "w"], ["y"])], [vi("x", FLOAT, [2**20, 2**10, 2**5, 2**5])],
                                [vi("y", FLOAT, None)], [tensor("w", [2**20, 2**10, 3, 3])]),
        "any", "Conv with 2**20 channels: FLOPs near 2**70")
    add("conv_kernel_too_big.onnx", model([helper.make_node("Conv", ["x", "w"], ["y"])], [vi("x", FLOAT, [1, 3, 4, 4])],
                                          [vi("y", FLOAT, None)], [tensor("w", [8, 3, 9, 9])]),
        "any", "Conv kernel larger than the image (negative output size)")
    add("conv_stride_zero.onnx", model([helper.make_node("Conv", ["x", "w"], ["y"], strides=[0, 0])],
                                       [vi("x", FLOAT, [1, 3, 8, 8])], [vi("y", FLOAT, None)], [tensor("w", [8, 3, 3, 3])]),
        "any", "Conv with stride 0 (division by zero in the shape formula)")
    add("conv_group_zero.onnx", model([helper.make_node("Conv", ["x", "w"], ["y"], group=0)],
                                      [vi("x", FLOAT, [1, 3, 8, 8])], [vi("y", FLOAT, None)], [tensor("w", [8, 3, 3, 3])]),
        "any", "Conv with group 0")
    add("matmul_rank0.onnx", model([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", FLOAT, []), vi("w", FLOAT, [])],
                                   [vi("y", FLOAT, None)]), "any", "MatMul of scalars")
    add("gemm_mismatch.onnx", model([helper.make_node("Gemm", ["x", "w"], ["y"])], [vi("x", FLOAT, [2, 3])],
                                    [vi("y", FLOAT, None)], [tensor("w", [5, 7])]), "any", "Gemm with K mismatch")
    add("attr_wrong_type.onnx", model([helper.make_node("Transpose", ["x"], ["y"], perm="not a list")],
                                      [vi("x", FLOAT, [2, 3])], [vi("y", FLOAT, None)]), "any", "perm given as a string")
    lstm_m = onnx.load_from_string(lstm)
    node = next(n for n in lstm_m.graph.node if n.op_type == "LSTM")
    for a in node.attribute:
        if a.name == "hidden_size":
            a.CopyFrom(helper.make_attribute("hidden_size", helper.make_graph([], "g", [], [])))
    add("lstm_hidden_size_graph.onnx", lstm_m, "any",
        "lstm.onnx whose LSTM hidden_size is a graph (found by fuzzing: a shape holding a GraphProto)")
    lstm_m = onnx.load_from_string(lstm)
    node = next(n for n in lstm_m.graph.node if n.op_type == "LSTM")
    r = next(t for t in lstm_m.graph.initializer if t.name == node.input[2])
    del r.dims[1:]
    add("lstm_r_rank1.onnx", lstm_m, "any",
        "lstm.onnx whose LSTM recurrent weight R has rank 1 (found by fuzzing: IndexError in traffic.rnn_traffic)")
    add("cast_to_graph.onnx", model([helper.make_node("Cast", ["x"], ["y"],
                                                      to=helper.make_graph([], "g", [], []))],
                                    [vi("x", FLOAT, [2])], [vi("y", FLOAT, None)]), "any", "Cast whose 'to' is a graph")
    add("reshape_shape_attr_graph.onnx", model([helper.make_node("ConstantOfShape", ["s"], ["y"],
                                                                 value=helper.make_graph([], "g", [], []))],
                                               [], [vi("y", FLOAT, None)], [helper.make_tensor("s", INT64, [1], [4])]),
        "any", "ConstantOfShape whose 'value' is a graph")
    add("transpose_bad_perm.onnx", model([helper.make_node("Transpose", ["x"], ["y"], perm=[5, 9, -100])],
                                         [vi("x", FLOAT, [2, 3])], [vi("y", FLOAT, None)]), "any", "perm out of range")
    add("split_zero.onnx", model([helper.make_node("Split", ["x"], ["a", "b"], num_outputs=0, axis=0)],
                                 [vi("x", FLOAT, [4])], [vi("a", FLOAT, None)], opset=18), "any", "Split num_outputs 0")

    # unknown ops and domains: reported as unsupported, exit 0
    add("unknown_domain.onnx", model([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("FancyOp", ["a"], ["y"], domain="acme")],
                                     [vi("x", FLOAT, [4, 4])], [vi("y", FLOAT, [4, 4])], extra_opsets=[("acme", 1)]),
        "unsupported:acme.FancyOp", "op in an unknown domain")
    add("unknown_domain_no_import.onnx", model([helper.make_node("Relu", ["x"], ["a"]),
                                                helper.make_node("Op", ["a"], ["y"], domain="evil.example")],
                                               [vi("x", FLOAT, [4, 4])], [vi("y", FLOAT, None)]),
        "unsupported:evil.example.Op", "op in a domain with no opset import, output shape unknown")
    add("unknown_default_op.onnx", model([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("NoSuchOp", ["a"], ["y"])],
                                         [vi("x", FLOAT, [4, 4])], [vi("y", FLOAT, None)]),
        "unsupported:NoSuchOp", "unknown op in the default domain")
    add("unknown_op_many_outputs.onnx", model([helper.make_node("Mystery", ["x"], [f"o{k}" for k in range(50)], domain="x.y"),
                                               helper.make_node("Sum", [f"o{k}" for k in range(50)], ["y"])],
                                              [vi("x", FLOAT, [4])], [vi("y", FLOAT, None)], extra_opsets=[("x.y", 3)]),
        "unsupported:x.y.Mystery", "unknown op with 50 outputs of unknown shape feeding Sum")
    add("unknown_op_name_hostile.onnx", model([helper.make_node("__import__('os').system('x')", ["x"], ["y"],
                                                                domain="os;rm -rf")],
                                              [vi("x", FLOAT, [4])], [vi("y", FLOAT, None)]),
        "unsupported:os;rm -rf.__import__('os').system('x')", "op type and domain that look like code")

    # subgraph nesting
    add("if_nested_30.onnx", deep_if_proto(30), "any", "If nested 30 deep (protobuf can still parse it)")
    add("if_nested_120.onnx", deep_if_bytes(120), "error", "If nested 120 deep")
    add("if_nested_400.onnx", deep_if_bytes(400), "error", "If nested 400 deep")
    add("loop_nested_120.onnx", deep_loop_bytes(120), "error", "Loop bodies nested 120 deep")

    # local functions
    f_rec = helper.make_function("local", "F", ["a"], ["b"], [helper.make_node("F", ["a"], ["b"], domain="local")],
                                 [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    add("function_recursive.onnx", model([helper.make_node("F", ["x"], ["y"], domain="local")], [vi("x", FLOAT, [4])],
                                         [vi("y", FLOAT, None)], extra_opsets=[("local", 1)], functions=[f_rec]),
        "error", "a local function that calls itself")
    f_a = helper.make_function("local", "A", ["a"], ["b"], [helper.make_node("B", ["a"], ["b"], domain="local")],
                               [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    f_b = helper.make_function("local", "B", ["a"], ["b"], [helper.make_node("A", ["a"], ["b"], domain="local")],
                               [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
    add("function_mutual_recursion.onnx", model([helper.make_node("A", ["x"], ["y"], domain="local")],
                                                [vi("x", FLOAT, [4])], [vi("y", FLOAT, None)],
                                                extra_opsets=[("local", 1)], functions=[f_a, f_b]),
        "error", "two local functions calling each other")
    f_bad = helper.make_function("local", "G", ["a"], ["b"], [helper.make_node("Relu", ["nothing"], ["b"])],
                                 [helper.make_opsetid("", 17)])
    add("function_dangling.onnx", model([helper.make_node("G", ["x"], ["y"], domain="local")], [vi("x", FLOAT, [4])],
                                        [vi("y", FLOAT, None)], extra_opsets=[("local", 1)], functions=[f_bad]),
        "any", "a local function reading a tensor it does not have")
    # each function calls the next twice, 40 levels: 2**40 nodes once inlined, from a 4 KB file
    doubling = [helper.make_function("local", "F40", ["a"], ["b"], [helper.make_node("Relu", ["a"], ["b"])],
                                     [helper.make_opsetid("", 17)])]
    for k in range(39, -1, -1):
        doubling.append(helper.make_function(
            "local", f"F{k}", ["a"], ["b"], [helper.make_node(f"F{k + 1}", ["a"], ["t"], domain="local"),
                                             helper.make_node(f"F{k + 1}", ["t"], ["b"], domain="local")],
            [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]))
    add("function_doubling_40.onnx", model([helper.make_node("F0", ["x"], ["y"], domain="local")], [vi("x", FLOAT, [4])],
                                           [vi("y", FLOAT, None)], extra_opsets=[("local", 1)], functions=doubling),
        "error", "local functions each calling the next twice, 40 levels deep (2**40 nodes inlined)")

    # strings that are not UTF-8 (protobuf hands out bytes for them) and names with line breaks
    def patched(m, old: bytes, new: bytes) -> bytes:
        data = m.SerializeToString()
        assert data.count(old) >= 1, old
        return data.replace(old, new)

    bad = b"\xff\xfe\xfd\xfc"
    base_nodes = [helper.make_node("Relu", ["x"], ["QQQQ"], name="NNNN"), helper.make_node("Neg", ["QQQQ"], ["y"])]
    add("utf8_node_name.onnx", patched(model(base_nodes, [vi("x", FLOAT, [2])], [vi("y", FLOAT, [2])]), b"NNNN", bad),
        "error", "a node name that is not UTF-8")
    add("utf8_tensor_name.onnx", patched(model(base_nodes, [vi("x", FLOAT, [2])], [vi("y", FLOAT, [2])]), b"QQQQ", bad),
        "any", "a tensor name that is not UTF-8 (twice the same bytes)")
    add("utf8_op_type.onnx", patched(model([helper.make_node("ZZZZ", ["x"], ["y"], domain="d")], [vi("x", FLOAT, [2])],
                                           [vi("y", FLOAT, [2])]), b"ZZZZ", bad), "error", "an op type that is not UTF-8")
    gm = model(base_nodes, [vi("x", FLOAT, [2])], [vi("y", FLOAT, [2])])
    gm.graph.name = "GGGG"
    add("utf8_graph_name.onnx", patched(gm, b"GGGG", bad), "error", "a graph name that is not UTF-8")
    mm_meta = model([helper.make_node("Relu", ["x"], ["y"], name="/a/Relu")], [vi("x", FLOAT, [2])], [vi("y", FLOAT, [2])])
    p_ = mm_meta.graph.node[0].metadata_props.add()
    p_.key, p_.value = "pkg.torch.onnx.name_scopes", "MMMM"
    add("utf8_metadata.onnx", patched(mm_meta, b"MMMM", bad), "error", "node metadata that is not UTF-8")
    add("newline_in_name.onnx", model([helper.make_node("Add", ["x", "gh\nost"], ["y"])], [vi("x", FLOAT, [2])],
                                      [vi("y", FLOAT, [2])]), "error", "an error quoting a tensor name with a line break")

    # paths that point outside: never read
    for k, loc in enumerate(OUTSIDE_PATHS):
        add(f"external_outside_{k}.onnx", model(mm, [vi("x", FLOAT, [2, 4])], [vi("y", FLOAT, None)],
                                                [tensor("w", [4, 4], external=loc)]),
            "any", f"initializer with external data at {loc}")
    add("external_small_shape.onnx", model([helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", FLOAT, [2, 3])],
                                           [vi("y", FLOAT, None)], [tensor("s", [2], INT64, external="../../etc/passwd")]),
        "any", "a shape tensor (small, would be folded) stored at ../../etc/passwd")
    add("raw_data_path.onnx", model(mm, [vi("x", FLOAT, [2, 4])], [vi("y", FLOAT, None)],
                                    [tensor("w", [4, 4], raw=b"../../etc/passwd")]),
        "any", "raw_data holding the bytes '../../etc/passwd' (a value, never a path)")
    const_ext = helper.make_node("Constant", [], ["s"], value=tensor("cv", [2], INT64, external="/etc/passwd"))
    add("constant_external.onnx", model([const_ext, helper.make_node("Reshape", ["x", "s"], ["y"])],
                                        [vi("x", FLOAT, [2, 3])], [vi("y", FLOAT, None)]),
        "any", "a Constant node whose value is external data at /etc/passwd")
    out.update(audit_onnx_cases(lstm, out["cast_to_graph.onnx"][0]))
    return out


def audit_onnx_cases(lstm: bytes, cast_to_graph: bytes) -> dict[str, tuple[bytes, str, str]]:
    """Failures an outside audit found (each fixed): silent wrong results, unbounded work, tracebacks."""
    out: dict[str, tuple[bytes, str, str]] = {}

    def add(name, data, expect, why):
        out[name] = (data.SerializeToString() if isinstance(data, onnx.ModelProto) else data, expect, why)

    add("cast_to_graph_amp.onnx", cast_to_graph, "any", "--precision amp on a Cast whose 'to' is a graph")
    big = 2**40
    add("init_dim_2p40_train.onnx", model([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", FLOAT, [2, big])],
                                          [vi("y", FLOAT, None)], [tensor("w", [big, 4], external="w.bin")]),
        "any", "--mode train with a 2**40-row weight (the multi-tensor launch count once looped 2**56 times)")
    add("conv_dims_2p40_train.onnx", model([helper.make_node("Conv", ["x", "w"], ["y"])],
                                           [vi("x", FLOAT, [big, big, big, big])], [vi("y", FLOAT, None)],
                                           [tensor("w", [big, big, 3, 3], external="w.bin")]),
        "any", "--mode train on a convolution of 2**40-sized dimensions")
    m = onnx.load_from_string(lstm)
    m.graph.output.append(m.graph.input[0])  # checker-valid: a graph input also listed as an output
    add("input_also_output.onnx", m, "ok", "the graph input also listed as a graph output (once predicted 0 s)")
    gpt = model([helper.make_node("Gather", ["emb", "input_ids"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
                [vi("input_ids", INT64, [1, "seq"])], [vi("y", FLOAT, None)], [tensor("emb", [50, 8], external="e.bin")])
    add("fixed_batch_shape_contradicts.onnx", gpt, "error",
        "--shape input_ids=4,1024 on an input traced at batch 1 ([1, seq]): names the input and the dimension")
    fixed = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", FLOAT, [1, 8])], [vi("y", FLOAT, None)])
    add("fixed_batch_batch_contradicts.onnx", fixed, "error", "--batch 4 where no input has a symbolic batch")
    unknown = [helper.make_node("Reshape", ["x", "s"], ["r0"])] + [
        helper.make_node("Relu", [f"r{k}"], [f"r{k + 1}"]) for k in range(6)]
    mostly = model(unknown, [vi("x", FLOAT, [2, 8]), vi("s", INT64, [2])], [vi("r6", FLOAT, None)])
    add("mostly_unknown_shapes.onnx", mostly, "error",
        "every op's shape unknown (a Reshape to a runtime shape): not a prediction without --allow-partial")
    add("mostly_unknown_shapes_allowed.onnx", mostly, "ok", "the same with --allow-partial: the partial result")
    relu = [helper.make_node("Relu", ["x"], ["y"])]
    dup_init = model(relu, [vi("x", FLOAT, [2])], [vi("y", FLOAT, None)],
                     [tensor("w", [2], raw=b"\0" * 8), tensor("w", [3], raw=b"\0" * 12)])
    add("duplicate_initializer.onnx", dup_init, "error", "two initializers named w")
    add("duplicate_output.onnx", model(relu, [vi("x", FLOAT, [2])], [vi("y", FLOAT, None), vi("y", FLOAT, None)]),
        "error", "graph output y listed twice")
    shadow = model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", FLOAT, [2, 4]), vi("w", FLOAT, [7])],
                   [vi("y", FLOAT, None)], [tensor("w", [4], raw=b"\0" * 16)])
    add("input_shadows_initializer.onnx", shadow, "error", "input w [7] shadowing an initializer w [4]")
    body = helper.make_graph([helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])],
                             "body", [], [vi("b", FLOAT, [2])])
    add("subgraph_cycle.onnx", model([helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body)],
                                     [vi("c", BOOL, [])], [vi("y", FLOAT, None)]), "error", "an If body with a cycle")
    add("opset_future.onnx", model(relu, [vi("x", FLOAT, [2])], [vi("y", FLOAT, None)], opset=29), "error",
        "default opset 29, newer than onnx knows (onnx.checker: unknown opset)")
    sp = onnx.SparseTensorProto()
    sp.values.CopyFrom(tensor("w", [3], raw=b"\0" * 12))
    sp.indices.CopyFrom(tensor("w_idx", [3], INT64, raw=bytes(24)))
    sp.dims.extend([4, 4])
    smodel = model([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", FLOAT, [2, 4])], [vi("y", FLOAT, None)])
    smodel.graph.sparse_initializer.append(sp)
    add("sparse_initializer.onnx", smodel, "ok", "a valid sparse initializer (once rejected as a dangling input)")
    lie = model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", FLOAT, [2])], [vi("y", FLOAT, None)],
                [tensor("w", [], raw=b"\1" * 4096)])
    add("init_dims_understate_data.onnx", lie, "any", "an initializer whose dims say [] over 4 KB of raw data")
    esc = "\x1b[31mred\x1b[0m\r\x1b]0;title\x07"
    add("ansi_names.onnx", model([helper.make_node("Relu", ["x"], ["y"], name=f"=cmd|{esc}")], [vi("x", FLOAT, [2])],
                                 [vi("y", FLOAT, None)]), "ok", "ANSI escapes, a carriage return and '=' in a node name")
    return out


def _ncu_base() -> tuple[list[str], list[str], list[str]]:
    header = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
              "Grid Size", "Device", "CC", "dram__bytes.sum", "gpu__time_duration.sum", "lts__t_bytes.sum"]
    units = [""] * 11 + ["Mbyte", "usecond", "byte"]
    row = ["0", "1", "python3", "h", "kern", "1", "7", "(128, 1, 1)", "(784, 1, 1)", "0", "9.0", "1.5", "12.3", "456"]
    return header, units, row


def valid_ncu_csv() -> str:
    """A small valid raw-page ncu CSV (also the seed of the property tests and the fuzzer)."""
    header, units, row = _ncu_base()
    row2 = ["1"] + row[1:4] + ["void at::native::kernel<4>(int, T2)"] + row[5:11] + ["n/a", "3.25", "1,024"]
    return "==PROF== Connected to process 1\n" + csv_text([header, units, row, row2])


def valid_ncu_details_csv() -> str:
    ident = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
             "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]
    base = ["0", "1", "python3", "h", "kern", "1", "7", "(128, 1, 1)", "(784, 1, 1)", "0", "9.0", "S"]
    rows = [ident, base + ["gpu__time_duration.sum", "usecond", "12.3"], base + ["dram__bytes.sum", "Mbyte", "1.5"],
            base + ["Duration", "usecond", "12.3"]]
    return csv_text(rows)


def ncu_cases(rng: random.Random) -> dict[str, tuple[bytes, str, str]]:
    header, units, row = _ncu_base()
    out: dict[str, tuple[bytes, str, str]] = {}

    def add(name, text, expect, why):
        out[name] = (text.encode("utf-8") if isinstance(text, str) else text, expect, why)

    def without(col):
        k = header.index(col)
        return csv_text([header[:k] + header[k + 1:], units[:k] + units[k + 1:], row[:k] + row[k + 1:]])

    def with_cell(col, value, unit=None):
        k = header.index(col)
        r, u = list(row), list(units)
        r[k] = value
        if unit is not None:
            u[k] = unit
        return csv_text([header, u, r])

    add("valid_raw.csv", valid_ncu_csv(), "unmapped", "a valid raw page (control)")
    add("valid_details.csv", valid_ncu_details_csv(), "unmapped", "a valid details page (control)")
    add("empty.csv", "", "error", "empty file")
    add("blank_lines.csv", "\n\n   \n", "error", "only blank lines")
    add("prof_only.csv", "==PROF== Connected to process 1\n==PROF== Disconnected\n", "error", "only ncu log lines")
    add("no_header.csv", csv_text([row, row]), "error", "data rows without a header")
    add("header_only.csv", csv_text([header]), "error", "a header and no kernels")
    add("missing_time.csv", without("gpu__time_duration.sum"), "error", "no gpu__time_duration.sum column")
    add("missing_name.csv", without("Kernel Name"), "error", "no Kernel Name column")
    add("missing_cc.csv", without("CC"), "error", "no CC column (architecture unknown)")
    add("details_missing_value.csv", valid_ncu_details_csv().replace('"Metric Value"', '"Value"'), "error",
        "details page without Metric Value")
    add("time_unit_bytes.csv", with_cell("gpu__time_duration.sum", "12.3", "byte"), "error", "time in bytes")
    add("bytes_unit_time.csv", with_cell("dram__bytes.sum", "1.5", "msecond"), "error", "bytes in milliseconds")
    add("unit_garbage.csv", with_cell("lts__t_bytes.sum", "4", "furlongs/fortnight"), "error", "unknown unit")
    add("value_text.csv", with_cell("gpu__time_duration.sum", "fast"), "error", "time 'fast'")
    add("value_locale.csv", with_cell("gpu__time_duration.sum", "12,3"), "error", "decimal comma")
    add("value_na_time.csv", with_cell("gpu__time_duration.sum", "n/a"), "error", "time n/a")
    add("value_inf.csv", with_cell("gpu__time_duration.sum", "inf"), "error", "time inf")
    add("value_huge.csv", with_cell("gpu__time_duration.sum", "1e999"), "error", "time 1e999")
    add("value_negative.csv", with_cell("gpu__time_duration.sum", "-5"), "error", "negative time")
    add("value_nan.csv", with_cell("gpu__time_duration.sum", "NaN"), "error", "time NaN")
    add("value_bytes_negative.csv", with_cell("dram__bytes.sum", "-1.5"), "error", "negative HBM bytes")
    add("value_bytes_inf.csv", with_cell("lts__t_bytes.sum", "inf"), "error", "infinite L2 bytes")
    add("id_text.csv", with_cell("ID", "abc"), "error", "ID 'abc'")
    add("id_huge.csv", with_cell("ID", "1e999"), "error", "ID 1e999 (infinite)")
    add("id_nan_text.csv", with_cell("ID", "NaN"), "error", "ID NaN")
    add("id_inf.csv", with_cell("ID", "inf"), "error", "ID inf")
    add("name_empty.csv", with_cell("Kernel Name", ""), "error", "empty kernel name")
    add("cc_unknown.csv", with_cell("CC", "1.0"), "error", "compute capability 1.0")
    add("cc_text.csv", with_cell("CC", "../../etc/passwd"), "error", "CC that looks like a path")
    add("grid_garbage.csv", with_cell("Grid Size", "(((,,,)))"), "unmapped", "garbage grid size")
    add("ragged_short.csv", csv_text([header, units, row[:5]]), "error", "a row with too few cells")
    add("ragged_long.csv", csv_text([header, units, row + ["x", "y"]]), "error", "a row with too many cells")
    add("units_row_twice.csv", csv_text([header, units, row, units]), "error", "a units row after data")
    add("nul_bytes.csv", csv_text([header, units]) + '"0","1\x00\x00","p"\n', "error", "NUL bytes in a row")
    add("nul_in_header.csv", '"ID\x00","Kernel Name","gpu__time_duration.sum"\n"0","k","1"\n', "error", "NUL in header")
    add("unterminated_quote.csv", csv_text([header, units]) + '"0","1","python3,"h\n', "error", "unterminated quote")
    add("quote_newline.csv", csv_text([header, units]).rstrip("\n") + '\n"0","1","a\nb",' + ",".join('"x"' for _ in header[3:]) + "\n",
        "error", "a quoted cell spanning two lines")
    add("binary.csv", rng.randbytes(600), "error", "random bytes")
    add("latin1.csv", ("ID,Kernel Name,gpu__time_duration.sum\n0,k\xe9rnel,1\n").encode("latin-1"), "error",
        "latin-1 bytes (no CC column)")
    add("bom_header.csv", "\ufeff" + valid_ncu_csv().split("\n", 1)[1], "unmapped", "a byte-order mark before the header")
    add("bom_details.csv", "\ufeff" + valid_ncu_details_csv(), "unmapped", "a byte-order mark before a details page")
    add("many_columns.csv", csv_text([header + [f"x__{k}" for k in range(800)], units + [""] * 800,
                                      row + ["1"] * 800]), "unmapped", "800 extra metric columns")
    for delim, tag in ((";", "semicolon"), ("\t", "tab"), ("|", "pipe")):
        buf = io.StringIO()
        csv.writer(buf, delimiter=delim, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows([header, units, row])
        add(f"delimiter_{tag}.csv", buf.getvalue(), "unmapped", f"cells separated by {tag}s (a locale's export)")
    add("delimiter_semicolon_decimal_comma.csv", csv_text([header, units, row]).replace('","', '";"')
        .replace('"12.3"', '"12,3"'), "error", "semicolons with a decimal comma (ambiguous number)")
    add("crlf.csv", valid_ncu_csv().replace("\n", "\r\n"), "unmapped", "Windows line ends")
    return out


# profiles and calibrations -------------------------------------------------------------------
def _bundled(name: str) -> dict:
    return json.loads((ROOT / "predictor" / "machine" / "profiles" / name).read_text())


def profile_cases() -> dict[str, tuple[bytes, str, str]]:
    base = _bundled("v100.json")
    out: dict[str, tuple[bytes, str, str]] = {}

    def add(name, doc, why, expect="error", raw=False):
        data = doc if raw else json.dumps(doc, indent=1, sort_keys=True, allow_nan=True).encode()
        out[name] = (data if isinstance(data, bytes) else data.encode(), expect, why)

    def mutate(path, value, delete=False):
        return _mutated(base, path, value, delete)

    add("control.json", base, "the bundled v100 profile (control)", expect="any")
    add("not_json.json", b"{not json", "invalid JSON", raw=True)
    add("empty.json", b"", "empty file", raw=True)
    add("top_list.json", [1, 2, 3], "top level is a list")
    add("top_string.json", "v100", "top level is a string")
    add("null.json", None, "top level is null")
    add("binary.json", bytes(range(256)) * 4, "binary, not UTF-8", raw=True)
    add("utf16.json", json.dumps(base).encode("utf-16"), "UTF-16 with BOM", raw=True)
    add("schema_2.json", mutate(["schema_version"], 2), "schema_version 2")
    add("name_int.json", mutate(["name"], 7), "name is a number")
    add("hbm_negative.json", mutate(["bandwidth_Bps", "HBM", "value"], -900e9), "negative HBM bandwidth")
    add("hbm_zero.json", mutate(["bandwidth_Bps", "HBM", "value"], 0), "zero HBM bandwidth")
    add("hbm_nan.json", mutate(["bandwidth_Bps", "HBM", "value"], float("nan")), "HBM bandwidth NaN")
    add("hbm_inf.json", mutate(["bandwidth_Bps", "HBM", "value"], float("inf")), "HBM bandwidth Infinity")
    add("hbm_string.json", mutate(["bandwidth_Bps", "HBM", "value"], "900e9"), "HBM bandwidth as a string")
    add("hbm_bool.json", mutate(["bandwidth_Bps", "HBM", "value"], True), "HBM bandwidth true")
    add("hbm_list.json", mutate(["bandwidth_Bps", "HBM"], [1, 2]), "HBM bandwidth as a list")
    add("hbm_missing.json", mutate(["bandwidth_Bps", "HBM"], None, delete=True), "no HBM bandwidth")
    add("hbm_bad_source.json", mutate(["bandwidth_Bps", "HBM", "source"], "nowhere"), "HBM source not in sources")
    add("hbm_source_list.json", mutate(["bandwidth_Bps", "HBM", "source"], ["datasheet"]),
        "HBM source is a list (unhashable)")
    add("hbm_tiny.json", mutate(["bandwidth_Bps", "HBM", "value"], 5e-324), "HBM bandwidth 5e-324 B/s (predicts infinite time)")
    add("hbm_huge.json", mutate(["bandwidth_Bps", "HBM", "value"], 1.7e308), "HBM bandwidth 1.7e308 B/s")
    add("bandwidth_list.json", mutate(["bandwidth_Bps"], []), "bandwidth_Bps is a list")
    add("bandwidth_extra_level.json", mutate(["bandwidth_Bps", "L0"], {"value": 1, "source": "datasheet"}),
        "unknown memory level L0")
    add("sm_count_fraction.json", mutate(["sm_count", "value"], 80.5), "fractional SM count")
    add("sm_count_huge.json", mutate(["sm_count", "value"], 1e300), "SM count 1e300")
    add("clock_missing.json", mutate(["sm_clock_hz"], None, delete=True), "no sm_clock_hz")
    add("peaks_empty.json", mutate(["peak_flops_per_s"], {}), "no peaks")
    add("peaks_unknown_precision.json", mutate(["peak_flops_per_s", "fp128"], {"cuda": {"value": 1, "source": "datasheet"}}),
        "peak for precision fp128")
    add("peaks_unknown_unit.json", mutate(["peak_flops_per_s", "fp32", "quantum"], {"value": 1, "source": "datasheet"}),
        "peak for unit 'quantum'")
    add("peaks_no_fp32.json", mutate(["peak_flops_per_s", "fp32"], None, delete=True), "no fp32 peak")
    add("peaks_unit_string.json", mutate(["peak_flops_per_s", "fp32"], "fast"), "fp32 peaks as a string")
    add("sources_list.json", mutate(["sources"], ["datasheet"]), "sources is a list")
    add("sources_values_str.json", mutate(["sources"], {"datasheet": "x"}), "a source that is a string")
    add("aliases_string.json", mutate(["aliases"], "v100"), "aliases is a string")
    add("aliases_mixed.json", mutate(["aliases"], ["a", 1]), "aliases with a number")
    add("datasheet_list.json", mutate(["datasheet"], [1]), "datasheet is a list")
    add("raw_data_outside.json", mutate(["sources", "datasheet", "raw_data"], "../../etc/passwd"),
        "a source whose raw_data points at ../../etc/passwd (recorded, never read)", expect="any")
    add("raw_data_absolute.json", mutate(["sources", "datasheet", "raw_data"], "/etc/passwd"),
        "a source whose raw_data is /etc/passwd (recorded, never read)", expect="any")
    add("deep_nesting.json", b"[" * 5000 + b"]" * 5000, "5000 nested lists (recursion)", raw=True)
    add("deep_nesting_field.json", json.dumps(mutate(["datasheet"], None)).replace(
        '"datasheet": null', '"datasheet": ' + "[" * 3000 + "1" + "]" * 3000).encode(),
        "datasheet nested 3000 deep", raw=True)
    add("duplicate_keys.json", json.dumps(base).replace('"schema_version": 1', '"schema_version": 1, "schema_version": 9')
        .encode(), "schema_version given twice (last wins)", raw=True)
    add("pickle_like.json", b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94.", "a pickle stream", raw=True)
    return out


def calibration_cases() -> dict[str, tuple[bytes, str, str]]:
    base = json.loads((ROOT / "predictor" / "data" / "calibration_h200.json").read_text())
    base = {k: base[k] for k in ("schema_version", "gpu", "kernel_gap_s", "gemm_k_half", "host_dispatch_s",
                                 "classes", "hidden_kernels")}
    base["classes"] = {"default": base["classes"]["default"], "gemm": base["classes"].get("gemm", {})}
    out: dict[str, tuple[bytes, str, str]] = {}

    def add(name, doc, why, expect="error", raw=False):
        data = doc if raw else json.dumps(doc, indent=1, sort_keys=True, allow_nan=True).encode()
        out[name] = (data, expect, why)

    def mutate(path, value, delete=False):
        return _mutated(base, path, value, delete)

    star = ["classes", "default", "*"]
    add("control.json", base, "a trimmed bundled calibration (control)", expect="any")
    add("not_json.json", b"[1, 2", "invalid JSON", raw=True)
    add("empty.json", b"", "empty file", raw=True)
    add("top_list.json", [], "top level is a list")
    add("binary.json", bytes(range(256)) * 4, "binary, not UTF-8", raw=True)
    add("schema_missing.json", mutate(["schema_version"], None, delete=True), "no schema_version")
    add("gpu_missing.json", mutate(["gpu"], None, delete=True), "no gpu")
    add("gap_nan.json", mutate(["kernel_gap_s"], float("nan")), "kernel_gap_s NaN")
    add("gap_negative.json", mutate(["kernel_gap_s"], -1e-6), "negative kernel_gap_s")
    add("gap_string.json", mutate(["kernel_gap_s"], "0.5us"), "kernel_gap_s as a string")
    add("classes_list.json", mutate(["classes"], []), "classes is a list")
    add("no_default.json", mutate(["classes", "default"], None, delete=True), "no default class")
    add("default_list.json", mutate(["classes", "default"], [1]), "default class is a list")
    add("eff_zero.json", mutate(star + ["eff_compute"], 0), "eff_compute 0")
    add("eff_negative.json", mutate(star + ["eff_memory"], -0.5), "negative eff_memory")
    add("eff_nan.json", mutate(star + ["eff_memory"], float("nan")), "eff_memory NaN")
    add("eff_inf.json", mutate(star + ["eff_memory"], float("inf")), "eff_memory Infinity")
    add("t0_string.json", mutate(star + ["t0_s"], "1us"), "t0_s as a string")
    add("class_extra_key.json", mutate(star + ["evil"], 1), "a class entry with an unknown key")
    add("class_entry_list.json", mutate(star, [1, 2, 3]), "a class entry that is a list")
    add("gemm_k_half_string.json", mutate(["gemm_k_half"], "abc"), "gemm_k_half as a string")
    add("gemm_k_half_negative.json", mutate(["gemm_k_half"], -1e9), "negative gemm_k_half")
    add("gemm_k_half_nan.json", mutate(["gemm_k_half"], float("nan")), "gemm_k_half NaN")
    add("host_list.json", mutate(["host_dispatch_s"], [1, 2]), "host_dispatch_s is a list")
    add("host_string_value.json", mutate(["host_dispatch_s", "kernel"], "fast"), "host_dispatch_s.kernel string")
    add("host_nan.json", mutate(["host_dispatch_s", "kernel"], float("nan")), "host_dispatch_s.kernel NaN")
    add("hidden_list.json", mutate(["hidden_kernels"], [1]), "hidden_kernels is a list")
    add("hidden_extra_key.json", mutate(["hidden_kernels", "Conv", "fp16"], [{"kind": "layout", "count": 1,
                                                                             "bytes_of": "io", "exec": "x"}]),
        "a hidden kernel with an unknown key")
    add("hidden_missing_key.json", mutate(["hidden_kernels", "Conv", "fp16"], [{"kind": "layout"}]),
        "a hidden kernel without count")
    add("hidden_count_string.json", mutate(["hidden_kernels", "Conv", "fp16"], [{"kind": "layout", "count": "two",
                                                                                "bytes_of": "io"}]),
        "a hidden kernel count 'two'")
    add("hidden_bytes_of_path.json", mutate(["hidden_kernels", "Conv", "fp16"], [{"kind": "layout", "count": 1,
                                                                                 "bytes_of": "../../etc/passwd"}]),
        "a hidden kernel whose bytes_of is a path")
    add("hidden_kind_unknown.json", mutate(["hidden_kernels", "Relu"], {"fp32": [{"kind": "teleport", "count": 1,
                                                                                "bytes_of": "io"}]}),
        "a hidden kernel of a class with no parameters (falls back to default)", expect="any")
    add("deep_nesting.json", b"{\"a\":" * 3000 + b"1" + b"}" * 3000, "3000 nested objects", raw=True)
    add("provenance_path.json", mutate(["provenance"], {"raw_data": "../../etc/passwd"}),
        "provenance naming ../../etc/passwd (never read)", expect="any")
    return out


# ------------------------------------------------------------------------------------------ writing
def build() -> dict[str, bytes]:
    """relative path -> bytes, including MANIFEST.json."""
    rng = random.Random(20261202)
    files: dict[str, bytes] = {}
    manifest: dict[str, dict] = {}
    for kind, ext, cases in (("onnx", "onnx", onnx_cases(rng)), ("ncu", "csv", ncu_cases(rng)),
                             ("profile", "json", profile_cases()), ("calibration", "json", calibration_cases())):
        for name, (data, expect, why) in cases.items():
            rel = f"{kind}/{name}"
            assert rel.endswith("." + ext), rel
            files[rel] = data
            manifest[rel] = {"kind": kind, "expect": expect, "why": why}
            if rel in PENDING:
                manifest[rel]["pending"] = PENDING[rel]
            if rel in ARGS:
                manifest[rel]["args"] = ARGS[rel]
            if rel in AFTER_LOAD:
                manifest[rel]["after_load"] = True
    files["MANIFEST.json"] = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    return files


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    files = build()
    if "--check" in argv:
        bad = [rel for rel, data in files.items()
               if not (CORPUS / rel).is_file() or (CORPUS / rel).read_bytes() != data]
        extra = [str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*") if p.is_file()
                 and str(p.relative_to(CORPUS)) not in files]
        for rel in bad + extra:
            print(f"corpus differs: {rel}", file=sys.stderr)
        return 1 if bad or extra else 0
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    for rel, data in files.items():
        p = CORPUS / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    total = sum(len(d) for d in files.values())
    print(f"wrote {len(files) - 1} cases ({total / 1024:.0f} KiB) to {CORPUS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
