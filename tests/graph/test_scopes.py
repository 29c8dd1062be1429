import pytest

from predictor.graph.scopes import node_scope, scope_from_metadata, scope_from_name


@pytest.mark.parametrize("name,scope", [
    ("/layer1/layer1.0/conv1/Conv", "layer1.0.conv1"),
    ("/layer1/layer1.0/downsample/downsample.0/Conv", "layer1.0.downsample.0"),
    ("/encoder/layer.0/attention/self/query/MatMul", "encoder.layer.0.attention.self.query"),
    ("/fc/Gemm", "fc"),
    ("/Flatten", ""),
    ("node_Conv_12", ""),
])
def test_scope_from_torchscript_names(name, scope):
    assert scope_from_name(name) == scope


def test_scope_from_dynamo_metadata():
    assert scope_from_metadata("['', 'layer1', 'layer1.0', 'layer1.0.conv1']") == "layer1.0.conv1"
    assert scope_from_metadata("['layer1', 'layer1.0', 'conv1']") == "layer1.0.conv1"
    assert scope_from_metadata("__import__('os')") == ""
    assert node_scope("node_conv2d", {"pkg.torch.onnx.name_scopes": "['features', 'features.0']"}) == "features.0"
    # as torch 2.11+ writes every node: the last name is the node's own, its class an op
    meta = {"pkg.torch.onnx.name_scopes": "['', 'model', 'model.h.0', 'model.h.0.attn', 'model.h.0.attn.c_attn', 'addmm']",
            "pkg.torch.onnx.class_hierarchy": "['GPT2Model', 'GPT2Block', 'GPT2Attention', 'Conv1D', 'aten.addmm.default']"}
    assert node_scope("node_addmm", meta) == "model.h.0.attn.c_attn"


def test_scope_of_head_is_scope_from_name():
    from predictor.graph.scopes import scope_from_name, scope_of_head

    names = ["/layer1/layer1.0/conv1/Conv", "/layer1/layer1.0/Relu", "/layer1/layer1.1/conv1/Conv", "/Conv", "Conv",
             "a/b/Conv", "//X", "/a//b/Mul", "/encoder/layer.0/attention/self/query/MatMul",
             "/encoder/layer.0/attention/Add", "/encoder/layer/layer.1/MatMul", "/", "/a/a.b/a.b.c/Op"]
    states: dict = {}
    for name in names + names[::-1]:
        assert scope_of_head(name[:name.rfind("/") + 1], states) == scope_from_name(name), name
