"""Kernel classification by name and kernel -> ONNX node attribution."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from onnx import helper

from predictor.measure.ncu.kernels import (KernelCategory as C, classify, graph_nodes, main, map_kernels,
                                     onnx_graph_nodes, op_type_from_name, scope_from_name, summary_lines)

REAL_NAMES = [
    ("void cutlass::Kernel2<cutlass_80_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_nn_align8>"
     "(cutlass_80_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_nn_align8::Params)", C.GEMM),
    ("nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTN", C.GEMM),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar("
     "at::TensorIteratorBase &, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::"
     "operator ()() const::{lambda()#14}::operator ()() const::{lambda(c10::Half)#1}, std::array<char *, 2>>"
     "(int, T2, T3)", C.ELEMENTWISE),
    ("void cudnn::bn_fw_inf_1C11_kernel_NCHW<__half, float, true, 1>(float, float, cudnnTensorStruct, "
     "const __half *, cudnnTensorStruct, __half *, cudnnTensorStruct, const float *, const float *, "
     "const float *, const float *, float)", C.NORM),
    ("void nchwToNhwcKernel<__half, __half, float, true, false, (cudnnKernelDataType_t)0>(int, int, int, int, "
     "const T1 *, T2 *, T3, T3)", C.LAYOUT),
    ("void nhwcToNchwKernel<__half, __half, float, true, false, (cudnnKernelDataType_t)0>(int, int, int, int, "
     "const T1 *, T2 *, T3, T3)", C.LAYOUT),
    ("sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_"
     "execute_segment_k_off_kernel__5x_cudnn", C.GEMM),
    ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
     "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(T4 *, const T2 *, int)", C.SOFTMAX),
    ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::half_t, "
     "Flash_kernel_traits<64, 128, 128, 4, cutlass::half_t>>, false, false, false, false, true, true, false>"
     "(pytorch_flash::Flash_fwd_params)", C.ATTENTION),
    ("fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::half_t, "
     "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)", C.ATTENTION),
    ("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", C.GEMM),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char *, 1>>"
     "(int, T2, T3)", C.FILL),
    ("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)"
     "::{lambda()#3}::operator ()() const::{lambda()#7}::operator ()() const::{lambda(float)#1}, "
     "std::array<char *, 2>, 4, TrivialOffsetCalculator<1, unsigned int>>(int, T1, T2, T3, T4, T5)", C.COPY),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, "
     "float, float>, unsigned int, float, 4, 4>>(T3)", C.REDUCE),
    ("void cublasLt::splitKreduce_kernel<32, 16, int, __half, __half, float, __half, true, false, false>"
     "(cublasLt::cublasSplitKParams<float>, const T4 *, const T5 *, T5 *, const T6 *, const T6 *)", C.REDUCE),
    ("void at::native::(anonymous namespace)::max_pool_forward_nchw<c10::Half, float>(int, const T1 *, long, "
     "long, long, int, int, int, int, int, int, int, int, int, int, T1 *, long *)", C.POOLING),
    ("void at::native::(anonymous namespace)::upsample_bilinear2d_out_frame<c10::Half, float>(int, T2, T2, bool, "
     "at::GenericPackedTensorAccessor<const T1, 4, at::DefaultPtrTraits, long>, "
     "at::GenericPackedTensorAccessor<T1, 4, at::DefaultPtrTraits, long>)", C.UPSAMPLE),
    ("void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous "
     "namespace)::OpaqueType<2>, unsigned int, 4, 64, 64>(T1 *, at::native::(anonymous namespace)::"
     "CatArrInputTensorMetadata<T1, T2, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<T2, 4>, "
     "int, T2)", C.CAT),
    ("void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned int, 2, 2, -2, true>"
     "(at::cuda::detail::TensorInfo<T1, T3>, at::cuda::detail::TensorInfo<const T1, T3>, "
     "at::cuda::detail::TensorInfo<const T2, T3>, int, int, T3, T3, long)", C.INDEX),
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, float>(int, T2, "
     "const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)", C.NORM),
    ("void at::native::batch_norm_transform_input_kernel<float, float, float, true, int>(...)", C.NORM),
    ("void RNN_blockPersist_fp_LSTM<__half, float, float, 128, 1, 0>(RNN_persistKernelParams<__half, float>)",
     C.RNN),
    ("void elemWiseRNNcell<float, float, float, (cudnnRNNMode_t)2, (cudnnRNNBiasMode_t)2>(int, int, int, int, "
     "int, bool, const T1 *, const T1 *, const T1 *, const T1 *, const T1 *, T1 *, T1 *, T1 *, T2, T2)", C.RNN),
    ("void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(...)", C.GEMM),
    ("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>(...)", C.GEMM),
    ("some_custom_kernel_xyz", C.OTHER),
]


@pytest.mark.parametrize("name, category", REAL_NAMES, ids=[c.value + str(i) for i, (_, c) in enumerate(REAL_NAMES)])
def test_classify_real_kernel_names(name, category):
    assert classify(name) is category


@pytest.mark.parametrize("name, op, scope", [
    ("/layer1/layer1.0/conv1/Conv", "Conv", "/layer1/layer1.0/conv1"),
    ("/layer1/layer1.0/relu_1/Relu", "Relu", "/layer1/layer1.0/relu_1"),
    ("/model/encoder/layer.0/attention/self/MatMul_1", "MatMul", "/model/encoder/layer.0/attention/self"),
    ("/Flatten", "Flatten", ""),
    ("node_Conv_12", "Conv", None),
    ("conv2d", None, None),
])
def test_names_of_exported_nodes(name, op, scope):
    assert op_type_from_name(name) == op
    assert scope_from_name(name) == scope


@dataclass(frozen=True)
class K:
    """The parts of a KernelSample the mapping reads."""

    id: int
    name: str
    nvtx: tuple
    time_s: float = 1e-6


ROOT = "mod||ResNet|"
L1 = "mod|layer1|Sequential|/layer1"
B0 = "mod|layer1.0|Bottleneck|/layer1/layer1.0"
GEMM = "sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64"
TO_NHWC = "void nchwToNhwcKernel<__half, __half, float, true, false, (cudnnKernelDataType_t)0>(...)"
TO_NCHW = "void nhwcToNchwKernel<__half, __half, float, true, false, (cudnnKernelDataType_t)0>(...)"
RELU = "void at::native::vectorized_elementwise_kernel<4, at::native::launch_clamp_scalar...>(int, T2, T3)"
ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<c10::Half>>(...)"
MEAN = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::Half, at::native::MeanOps<...>>>(T3)"
FILL = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, T2, T3)"


def resnet_like() -> tuple[list[K], tuple]:
    nodes = graph_nodes(["/conv1/Conv", "/relu/Relu", "/layer1/layer1.0/conv1/Conv", "/layer1/layer1.0/relu/Relu",
                         "/layer1/layer1.0/relu_1/Relu", "/layer1/layer1.0/Add", "/layer1/layer1.0/relu_2/Relu",
                         "/GlobalAveragePool_unused_scope/Unused", "/Flatten", "/fc/Gemm"])
    conv1 = (ROOT, "mod|conv1|Conv2d|/conv1")
    relu = [(ROOT, L1, B0, f"mod|layer1.0.relu|ReLU|/layer1/layer1.0/relu{s}") for s in ("", "_1", "_2")]
    samples = [
        K(0, TO_NHWC, conv1), K(1, GEMM, conv1, 5e-6), K(2, TO_NCHW, conv1),
        K(3, RELU, (ROOT, "mod|relu|ReLU|/relu")),
        K(4, GEMM, (ROOT, L1, B0, "mod|layer1.0.conv1|Conv2d|/layer1/layer1.0/conv1"), 4e-6),
        K(5, RELU, relu[0]), K(6, RELU, relu[1]),
        K(7, ADD, (ROOT, L1, B0)),
        K(8, RELU, relu[2]),
        K(9, MEAN, (ROOT,), 2e-6),                      # root scope holds /Flatten only: no reduce node
        K(10, "nvjet_hsh_64x8_64x16_4x1_v_bz_TNT", (ROOT, "mod|fc|Linear|/fc"), 3e-6),
        K(11, "void cublasLt::splitKreduce_kernel<32, 16, int, __half>(...)", (ROOT, "mod|fc|Linear|/fc")),
        K(12, FILL, ()),                                # outside the profiled forward's module ranges
    ]
    return samples, nodes


def test_mapping_resnet_like_scopes_layout_and_repeated_relu():
    samples, nodes = resnet_like()
    result = map_kernels(reversed(samples), nodes)      # order of the input does not matter: launch order does
    ids = {node: [s.id for s in ks] for node, ks in result.by_node.items()}
    assert ids == {
        "/conv1/Conv": [1], "/relu/Relu": [3], "/layer1/layer1.0/conv1/Conv": [4],
        "/layer1/layer1.0/relu/Relu": [5], "/layer1/layer1.0/relu_1/Relu": [6], "/layer1/layer1.0/Add": [7],
        "/layer1/layer1.0/relu_2/Relu": [8], "/GlobalAveragePool_unused_scope/Unused": [], "/Flatten": [],
        "/fc/Gemm": [10],
    }
    assert {c: [s.id for s in ks] for c, ks in result.unattributed.items()} == \
        {"layout": [0, 2], "reduce": [9, 11], "fill": [12]}
    reasons = {a.kernel_id: a.reason for a in result.assignments}
    assert reasons[0] == "no layout node in module" and reasons[9] == "no reduce node in module"
    assert reasons[12] == "no module range" and reasons[1] == "matched"
    s = result.summary
    assert (s.kernels, s.attributed, s.nodes_with_kernels, s.nodes_without_kernels) == (13, 8, 8, 2)
    # attributed: 5 + 4 + 3 us of GEMMs + 5 one-us kernels = 17 us; left over: 4 one-us kernels + a 2-us reduce
    assert s.attributed_time_s == pytest.approx(17e-6)
    assert s.time_s == pytest.approx(23e-6)
    assert s.unattributed["layout"].count == 2 and s.unattributed["reduce"].time_s == pytest.approx(3e-6)
    assert s.unattributed_by_reason["no module range"].count == 1


def test_mapping_order_within_a_module_uses_aten_op_calls():
    att = "mod|model.encoder.layer.0.attention.self|BertSelfAttention|/model/encoder/layer.0/attention/self"
    scope = "/model/encoder/layer.0/attention/self"
    nodes = graph_nodes([f"{scope}/MatMul", f"{scope}/Div", f"{scope}/Softmax", f"{scope}/MatMul_1"])
    bmm1 = (ROOT, att, "aten::matmul, sizes = [[8, 12, 128, 64], [8, 12, 64, 128]]", "aten::bmm, sizes = [[96, 128, 64], [96, 64, 128]]")
    soft = (ROOT, att, "aten::softmax, sizes = [[8, 12, 128, 128], [], []]", "aten::_softmax, sizes = [[8, 12, 128, 128], [], []]")
    bmm2 = (ROOT, att, "aten::matmul, sizes = [[8, 12, 128, 128], [8, 12, 128, 64]]", "aten::bmm, sizes = [[96, 128, 128], [96, 128, 64]]")
    samples = [K(0, "nvjet_a", bmm1), K(1, "nvjet_a", bmm1),       # two kernels of one bmm call
               K(2, "void cunn_SoftMaxForward<4>(...)", soft), K(3, "nvjet_b", bmm2)]
    result = map_kernels(samples, nodes)
    assert {n: [s.id for s in ks] for n, ks in result.by_node.items()} == {
        f"{scope}/MatMul": [0, 1], f"{scope}/Div": [], f"{scope}/Softmax": [2], f"{scope}/MatMul_1": [3]}


def test_mapping_without_aten_ranges_counts_each_kernel_and_clamps_to_last_node():
    scope = "/blk"
    nodes = graph_nodes([f"{scope}/MatMul", f"{scope}/MatMul_1"])
    rng = (ROOT, "mod|blk|Block|/blk")
    result = map_kernels([K(0, "nvjet_a", rng), K(1, "nvjet_b", rng), K(2, "nvjet_c", rng)], nodes)
    assert {n: [s.id for s in ks] for n, ks in result.by_node.items()} == {"/blk/MatMul": [0], "/blk/MatMul_1": [1, 2]}


def test_mapping_dynamo_names_with_module_paths():
    names = ["node_Relu_0", "node_Relu_1", "node_Relu_2", "node_Conv_3"]
    modules = {"node_Relu_0": "layer1.0.relu", "node_Relu_1": "layer1.0.relu@1", "node_Relu_2": "layer1.0.relu@2",
               "node_Conv_3": "layer1.0.conv1"}
    nodes = graph_nodes(names, node_modules=modules)
    relu = [(ROOT, L1, B0, f"mod|layer1.0.relu|ReLU|/layer1/layer1.0/relu{s}") for s in ("", "_1", "_2")]
    samples = [K(0, GEMM, (ROOT, L1, B0, "mod|layer1.0.conv1|Conv2d|/layer1/layer1.0/conv1")),
               K(1, RELU, relu[0]), K(2, RELU, relu[1]), K(3, RELU, relu[2])]
    result = map_kernels(samples, nodes)
    assert {n: [s.id for s in ks] for n, ks in result.by_node.items()} == {
        "node_Relu_0": [1], "node_Relu_1": [2], "node_Relu_2": [3], "node_Conv_3": [0]}


def test_mapping_module_without_nodes():
    result = map_kernels([K(0, RELU, (ROOT, "mod|drop|Dropout|/drop"))], graph_nodes(["/fc/Gemm"]))
    assert result.assignments[0].reason == "no node in module"
    assert result.unattributed == {"elementwise": (K(0, RELU, (ROOT, "mod|drop|Dropout|/drop")),)}


def test_onnx_graph_nodes_read_dynamo_name_scopes():
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="node_Conv_0")
    conv.metadata_props.add(key="pkg.torch.onnx.name_scopes", value="['', 'layer1', 'layer1.0', 'layer1.0.conv1', 'conv2d']")
    relu = helper.make_node("Relu", ["y"], ["z"], name="relu")
    graph = helper.make_graph([conv, relu], "g", [], [])
    nodes = onnx_graph_nodes(helper.make_model(graph))
    assert [(n.name, n.op_type, n.scope, n.module) for n in nodes] == [
        ("node_Conv_0", "Conv", None, "layer1.0.conv1"), ("relu", "Relu", None, None)]


def test_summary_lines_and_cli(tmp_path, capsys):
    samples, nodes = resnet_like()
    lines = summary_lines(map_kernels(samples, nodes))
    assert lines[0] == "13 kernels, 0.023 ms; attributed 8 (0.017 ms) to 8 nodes; 2 nodes without kernels"
    assert lines[1].split() == ["unattributed", "reduce", "2", "kernels", "0.003", "ms"]
    csv_path = tmp_path / "k.csv"
    csv_path.write_text('"ID","Kernel Name","CC","gpu__time_duration.sum"\n"","","","nsecond"\n'
                        f'"0","{GEMM}","9.0","2,000"\n"1","{TO_NHWC}","9.0","500"\n')
    assert main([str(csv_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["gemm", "1", "kernels", "0.002", "ms"]
    assert out[1].split() == ["layout", "1", "kernels", "0.001", "ms"]
