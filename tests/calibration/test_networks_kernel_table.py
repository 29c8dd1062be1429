"""Kernel attribution on a synthetic profiler trace (needs torch for DeviceType only)."""
import math
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
from torch.autograd import DeviceType  # noqa: E402

from calibration.networks import kernel_table as kt  # noqa: E402


class _Range:
    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


def _cpu(id_, name, parent=None, shapes=None, kernels=()):
    return SimpleNamespace(id=id_, name=name, cpu_parent=parent, input_shapes=shapes or [],
                           device_type=DeviceType.CPU, linked_correlation_id=0, time_range=_Range(id_, id_ + 1),
                           kernels=list(kernels))


def _trace():
    mod = _cpu(1, "module::layer1.0.conv1")
    conv = _cpu(2, "aten::conv2d", mod, [[32, 64, 56, 56], [64, 64, 3, 3]])
    leaf = _cpu(3, "aten::cudnn_convolution", conv)
    add = _cpu(4, "aten::add_", None, [[32, 64, 56, 56], [32, 64, 56, 56]])
    runtime = SimpleNamespace(id=900, name="cudaLaunchKernel", cpu_parent=None, device_type=DeviceType.CPU,
                              linked_correlation_id=3, time_range=_Range(3, 3.5), kernels=[])
    k1 = SimpleNamespace(id=2, name="sm90_xmma_fprop", device_type=DeviceType.CUDA, linked_correlation_id=3,
                         time_range=_Range(100.0, 112.5))
    k2 = SimpleNamespace(id=901, name="vectorized_elementwise_kernel", device_type=DeviceType.CUDA,
                         linked_correlation_id=4, time_range=_Range(113.0, 115.0))
    k3 = SimpleNamespace(id=902, name="Memset (Device)", device_type=DeviceType.CUDA, linked_correlation_id=0,
                         time_range=_Range(99.0, 99.5))
    return SimpleNamespace(events=lambda: [mod, conv, leaf, add, runtime, k2, k1, k3])


def test_kernel_rows_attribution():
    rows = kt.kernel_rows(_trace())
    assert [r.kernel_name for r in rows] == ["Memset (Device)", "sm90_xmma_fprop", "vectorized_elementwise_kernel"]
    memset, conv, add = rows
    assert conv.module_path == "layer1.0.conv1" and conv.aten_op == "aten::conv2d"
    assert conv.leaf_op == "aten::cudnn_convolution" and conv.input_shapes == "[[32,64,56,56],[64,64,3,3]]"
    assert conv.duration_us == 12.5 and conv.start_us == 1.0 and conv.kernel_idx == 1
    assert add.module_path == "" and add.aten_op == "aten::add_"
    assert memset.aten_op == "" and kt.is_memop(memset.kernel_name)


def test_enclosing_range():
    launched = kt.launched_kernels(_trace())
    assert kt.enclosing_range(launched[1][0], "module::") == "module::layer1.0.conv1"
    assert kt.enclosing_range(launched[2][0], "module::") is None


def test_fallback_without_linked_ids():
    mod = _cpu(1, "module::fc")
    op = _cpu(2, "aten::linear", mod, [[1, 512]], kernels=[SimpleNamespace(name="gemm", duration=3.0)])
    dev = SimpleNamespace(id=5, name="gemm", device_type=DeviceType.CUDA, time_range=_Range(10, 13))
    rows = kt.kernel_rows(SimpleNamespace(events=lambda: [mod, op, dev]))
    assert len(rows) == 1 and rows[0].module_path == "fc" and rows[0].duration_us == 3.0
    assert math.isnan(rows[0].start_us)


def test_module_ranges_record_paths():
    from torch.profiler import ProfilerActivity, profile

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with kt.ModuleRanges(model):
            model(torch.randn(2, 4))
    names = {e.name for e in prof.events()}
    assert {"module::<root>", "module::0", "module::1"} <= names
    assert not model._forward_hooks and not model[0]._forward_pre_hooks
