"""Build the PI-GAN-like generator and discriminator (ONNX, weight-free) of the scaling examples.

Physics-informed GANs for stochastic PDEs (Yang et al., arXiv:1910.13444, the Summit run of 27,500 V100s)
use fully connected generators and discriminators. The layer sizes of that run are not given in the text
we could read, so these are ASSUMED: a generator from 128 noise values through 4 hidden layers of 1024
(tanh) to 1024 field values (the flow field at 1024 sensor/collocation points), a discriminator from those
1024 values through 3 hidden layers of 1024 (ReLU) to one score. Weights are external
data that is not shipped (``predict`` never reads weights): every tensor in the file is under 1 KB.

    python examples/scaling/make_pigan.py   # writes pigan_generator.onnx, pigan_discriminator.onnx beside it
"""
from __future__ import annotations

import os

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))


def _weight(name: str, dims: list[int]) -> onnx.TensorProto:
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights-not-shipped.bin"), ("offset", "0"), ("length", str(4 * _numel(dims)))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def _numel(dims: list[int]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def mlp(name: str, widths: list[int], act: str, out_act: str | None) -> onnx.ModelProto:
    nodes, inits = [], []
    x = "input"
    for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
        w, bias, y = f"fc{i}.weight", f"fc{i}.bias", f"fc{i}"
        inits += [_weight(w, [b, a]), _weight(bias, [b])]
        nodes.append(helper.make_node("Gemm", [x, w, bias], [y], name=f"fc{i}", transB=1))
        last = i == len(widths) - 2
        kind = out_act if last else act
        if kind:
            nodes.append(helper.make_node(kind, [y], [f"{y}.act"], name=f"{kind.lower()}{i}"))
            y = f"{y}.act"
        x = y
    nodes.append(helper.make_node("Identity", [x], ["output"], name="output"))
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", widths[0]])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", widths[-1]])],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_pigan.py")
    model.doc_string = ("PI-GAN-like " + name + " (layer sizes assumed, see examples/scaling/make_pigan.py); "
                        "weights are external data that is not shipped")
    return model


def main() -> None:
    g = mlp("pigan_generator", [128, 1024, 1024, 1024, 1024, 1024], "Tanh", None)
    d = mlp("pigan_discriminator", [1024, 1024, 1024, 1024, 1], "Relu", None)
    for m, f in ((g, "pigan_generator.onnx"), (d, "pigan_discriminator.onnx")):
        onnx.save(m, os.path.join(HERE, f))
        print(os.path.join(HERE, f))


if __name__ == "__main__":
    main()
