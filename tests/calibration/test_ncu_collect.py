"""The collection driver without a GPU: commands, plans, ONNX scopes of module calls, the manifest."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from calibration.ncu import collect
from calibration.ncu.collect import Case, Options
from predictor.measure.ncu.nvtx import ModuleRange, ScopeTracker, innermost_module, parse_module_range, unqualified_name


def test_ncu_command_exact():
    cmd = collect.ncu_command(["python3", "-m", "w"], ["gpu__time_duration.sum", "lts__t_bytes.sum"], "o/c.csv",
                              ncu="/opt/ncu", launch_count=500)
    assert cmd == ["/opt/ncu", "--profile-from-start", "off", "--nvtx", "--clock-control", "none",
                   "--cache-control", "none", "--replay-mode", "kernel",
                   "--metrics", "gpu__time_duration.sum,lts__t_bytes.sum",
                   "--csv", "--page", "raw", "--print-units", "base", "--print-kernel-base", "demangled",
                   "--log-file", "o/c.csv", "--launch-count", "500", "python3", "-m", "w"]


def test_worker_command():
    case = Case("resnet50", "fp16", 32)
    assert case.name == "resnet50_fp16_b32"
    cmd = collect.worker_command(case, "d/m.json", Options(warmup=2, aten_ranges=False), python="py")
    assert cmd == ["py", "-m", "calibration.ncu.collect", "--worker", "--network", "resnet50", "--precision",
                   "fp16", "--batch", "32", "--warmup", "2", "--meta-out", "d/m.json", "--no-aten-ranges"]


def test_load_plan_and_its_errors():
    cases, options = collect.load_plan({"options": {"budget_s": 400, "default_timeout_s": 60},
                                        "cases": [{"network": "lstm", "precision": "fp32", "batch": 32},
                                                  {"network": "bert_base", "precision": "bf16", "batch": 8,
                                                   "timeout_s": 90}]})
    assert cases == [Case("lstm", "fp32", 32, 60.0), Case("bert_base", "bf16", 8, 90.0)]
    assert options == {"budget_s": 400}
    assert collect.load_plan([{"network": "x", "precision": "tf32", "batch": 1}])[0] == [Case("x", "tf32", 1)]
    for bad, msg in [({"cases": []}, "non-empty"),
                     ([{"network": "x", "precision": "fp8", "batch": 1}], "precision"),
                     ([{"network": "x", "precision": "fp16", "batch": 0}], "batch"),
                     ([{"network": "x", "precision": "fp16", "batch": 1, "bacth": 2}], "unknown keys"),
                     ({"cases": [{"network": "x", "precision": "fp16", "batch": 1}], "options": {"cache": "all"}},
                      "unknown keys"),
                     ([{"network": "x", "precision": "fp16", "batch": 1}] * 2, "duplicate")]:
        with pytest.raises(ValueError, match=msg):
            collect.load_plan(bad)


def test_bundled_plans_load():
    plans = Path(collect.__file__).parent / "plans"
    for path in sorted(plans.glob("*.json")):
        cases, options = collect.load_plan(json.loads(path.read_text()))
        collect.validate_options(Options(**options))
        assert cases


def test_select_metrics_drops_unlisted_but_never_time():
    listing = "gpu__time_duration\nlts__t_bytes\n"
    metrics, dropped, report = collect.select_metrics("hopper", listing)
    assert "lts__t_bytes.sum" in metrics and "gpu__time_duration.sum" in metrics
    assert "l1tex__t_bytes.sum" in dropped and "launch__grid_size" in metrics  # launch attributes are unlisted
    assert report.startswith("hopper: 2 present")
    metrics, dropped, _ = collect.select_metrics("hopper", "lts__t_bytes\n")
    assert metrics[0] == "gpu__time_duration.sum" and "gpu__time_duration.sum" not in dropped
    assert collect.select_metrics("hopper", None)[1] == []


# ----------------------------------------------------------------------------- ONNX scopes
def test_unqualified_names_follow_the_exporter():
    assert unqualified_name("layer1.0.conv1") == "conv1"
    assert unqualified_name("layer1.0") == "layer1.0"
    assert unqualified_name("model.encoder.layer.0") == "layer.0"
    assert unqualified_name("layer1.0.downsample.0") == "downsample.0"
    assert unqualified_name("") == ""


def test_scope_tracker_reproduces_torchscript_node_prefixes():
    t = ScopeTracker()
    scopes = []

    def call(qualname, cls, inner=()):
        scopes.append(t.enter(qualname, cls).scope)
        for q, c, i in inner:
            call(q, c, i)
        t.exit()

    relu = ("layer1.0.relu", "ReLU", ())
    call("", "ResNet", [("conv1", "Conv2d", ()),
                        ("layer1", "Sequential", [("layer1.0", "Bottleneck", [
                            ("layer1.0.conv1", "Conv2d", ()), relu, relu,
                            ("layer1.0.downsample", "Sequential", [("layer1.0.downsample.0", "Conv2d", ())]),
                            relu])])])
    assert scopes == ["", "/conv1", "/layer1", "/layer1/layer1.0", "/layer1/layer1.0/conv1",
                      "/layer1/layer1.0/relu", "/layer1/layer1.0/relu_1", "/layer1/layer1.0/downsample",
                      "/layer1/layer1.0/downsample/downsample.0", "/layer1/layer1.0/relu_2"]
    assert t.depth == 0


def test_module_range_text_round_trip():
    r = ModuleRange("layer1.0.relu", "ReLU", "/layer1/layer1.0/relu_1")
    assert r.text() == "mod|layer1.0.relu|ReLU|/layer1/layer1.0/relu_1"
    assert parse_module_range(r.text()) == r
    assert parse_module_range("aten::relu, sizes = [[1]]") is None
    stack = ("mod||ResNet|", r.text(), "aten::clamp_min")
    assert innermost_module(stack) == (1, r)
    assert innermost_module(("aten::add",)) is None


class FakeModule:
    """Enough of torch.nn.Module for the hooks: named_modules, hook registration, calls."""

    def __init__(self, cls, children=()):
        self.cls, self.children, self.pre, self.post = cls, dict(children), [], []

    def named_modules(self, prefix=""):
        yield prefix, self
        for name, child in self.children.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def register_forward_pre_hook(self, fn):
        self.pre.append(fn)
        return self

    def register_forward_hook(self, fn, always_call=False):
        assert always_call
        self.post.append(fn)
        return self

    def __call__(self, *calls):
        for fn in self.pre:
            fn(self, ())
        for child_name in calls:
            self.children[child_name]()
        for fn in self.post:
            fn(self, (), None)


def test_install_module_ranges_pushes_one_range_per_call():
    relu, conv = FakeModule("ReLU"), FakeModule("Conv2d")
    root = FakeModule("Net", {"conv": conv, "relu": relu})
    events = []
    collect.install_module_ranges(root, ScopeTracker(), lambda text: events.append(("push", text)),
                                  lambda: events.append(("pop",)))
    root.pre[0](root, ())
    conv()
    relu()
    relu()
    root.post[0](root, (), None)
    pushed = [e[1] for e in events if e[0] == "push"]
    assert [parse_module_range(p).scope for p in pushed] == ["", "/conv", "/relu", "/relu_1"]
    assert [parse_module_range(p).qualname for p in pushed] == ["", "conv", "relu", "relu"]
    assert len([e for e in events if e[0] == "pop"]) == 4


# ----------------------------------------------------------------------------- running cases
def _fake_csv(n_kernels: int) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(["ID", "Kernel Name", "CC", "gpu__time_duration.sum", "lts__t_bytes.sum"])
    w.writerow(["", "", "", "nsecond", "byte"])
    for i in range(n_kernels):
        w.writerow([str(i), f"kernel_{i}", "9.0", "1,000", "64"])
    return "==PROF== Profiling \"kernel_0\" - 0: 0%....50%....100% - 7 passes\n" \
           "==WARNING== something odd\n" + buf.getvalue()


def _fake_subprocess(outcomes):
    """A stand-in for collect._run_subprocess: per call, write the CSV named by --log-file and
    return the next (exit code, timed out, kernels)."""
    calls = []

    def run(cmd, timeout_s, stdout_path, stderr_path):
        code, timed_out, kernels = outcomes[len(calls)]
        calls.append((cmd, timeout_s))
        if kernels is not None:
            Path(cmd[cmd.index("--log-file") + 1]).write_text(_fake_csv(kernels))
            meta = Path(cmd[cmd.index("--meta-out") + 1])
            meta.write_text(json.dumps({"versions": {"torch": "2.11.0", "cudnn": 91900}}))
        return code, timed_out

    return run, calls


def test_run_plan_records_every_case_and_goes_on_after_failures(tmp_path, monkeypatch):
    run, calls = _fake_subprocess([(0, False, 3), (1, False, None), (None, True, None), (0, False, 0)])
    monkeypatch.setattr(collect, "_run_subprocess", run)
    monkeypatch.setattr(collect, "environment", lambda ncu: {"ncu_version": "fake"})
    listing = tmp_path / "listing.txt"
    listing.write_text("\n".join(n.split(".")[0] for n in collect.metric_names("hopper")))
    cases = [Case("a", "fp16", 1), Case("b", "fp32", 2), Case("c", "bf16", 4, timeout_s=7), Case("d", "tf32", 1)]
    out = tmp_path / "out"
    manifest = collect.run_plan(cases, out, Options(listing=str(listing), ncu="ncu"))
    saved = json.loads((out / "manifest.json").read_text())
    assert saved["cases"] == json.loads(json.dumps(manifest["cases"]))
    got = [(c["name"], c["status"], c["exit_code"], c["kernels"]) for c in saved["cases"]]
    assert got == [("a_fp16_b1", "ok", 0, 3), ("b_fp32_b2", "failed", 1, None),
                   ("c_bf16_b4", "timeout", None, None), ("d_tf32_b1", "failed", 0, 0)]
    a = saved["cases"][0]
    assert a["kernel_time_s"] == pytest.approx(3e-6) and a["passes_max"] == 7
    assert a["ncu_messages"] == ["==WARNING== something odd"] and a["csv"] == "a_fp16_b1.csv"
    assert a["command"][0] == "ncu" and "--launch-count" in a["command"]
    assert saved["cases"][3]["note"] == "ncu exited 0 but the CSV has no kernels"
    assert calls[2][1] == 7                                  # the case's own time limit
    assert saved["torch"] == {"torch": "2.11.0", "cudnn": 91900}
    assert saved["metrics_dropped"] == [] and saved["options"]["cache_control"] == "none"


def test_run_plan_budget_skips_cases_that_cannot_start(tmp_path, monkeypatch):
    run, calls = _fake_subprocess([])
    monkeypatch.setattr(collect, "_run_subprocess", run)
    monkeypatch.setattr(collect, "environment", lambda ncu: {})
    listing = tmp_path / "l.txt"
    listing.write_text("gpu__time_duration\n")
    manifest = collect.run_plan([Case("a", "fp16", 1)], tmp_path, Options(listing=str(listing), budget_s=40))
    assert calls == [] and manifest["cases"][0]["status"] == "skipped"
    assert manifest["cases"][0]["note"].startswith("budget:")


def test_results_printed_to_stdout_are_moved_to_the_csv(tmp_path, monkeypatch):
    def run(cmd, timeout_s, stdout_path, stderr_path):
        text = _fake_csv(2)
        Path(cmd[cmd.index("--log-file") + 1]).write_text(text.split('"ID"')[0])   # ==PROF== lines only
        Path(stdout_path).write_text('"ID"' + text.split('"ID"', 1)[1])
        return 0, False

    monkeypatch.setattr(collect, "_run_subprocess", run)
    res = collect.run_case(Case("a", "fp32", 1), tmp_path, Options(), ["gpu__time_duration.sum"], 10)
    assert (res.status, res.kernels, res.passes_max) == ("ok", 2, 7)
    assert (tmp_path / "a_fp32_b1.ncu.log").exists() and not (tmp_path / "a_fp32_b1.stdout.txt").exists()


def test_summarize_log():
    text = "==PROF== Profiling \"k\" - 0: 0%....100% - 9 passes\n==PROF== Profiling \"k\" - 1: - 1 pass\n" \
           "==ERROR== Failed to find metric x\nplain line\n"
    assert collect.summarize_log(text) == {"profiled_messages": 2, "passes_max": 9,
                                           "ncu_messages": ["==ERROR== Failed to find metric x"]}


def test_cli_dry_run_and_argument_errors(tmp_path, capsys):
    assert collect.main(["--network", "resnet50", "--precision", "fp16", "--batch", "32", "--out", str(tmp_path),
                         "--dry-run", "--ncu", "/x/ncu", "--cache-control", "all"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("/x/ncu --profile-from-start off --nvtx --clock-control none --cache-control all")
    assert line.endswith("--batch 32 --warmup 3 --meta-out " + str(tmp_path / "resnet50_fp16_b32.meta.json"))
    assert collect.main(["--network", "resnet50", "--out", str(tmp_path)]) == 2
    assert collect.main(["--network", "x", "--precision", "fp16", "--batch", "1"]) == 2


def test_training_cases():
    import pytest

    from calibration.ncu.collect import make_case

    c = make_case({"network": "resnet18", "precision": "amp", "batch": 8, "mode": "train"})
    assert c.mode == "train" and c.name == "resnet18_amp_b8_train"
    assert make_case({"network": "resnet18", "precision": "fp16", "batch": 8}).name == "resnet18_fp16_b8"
    for bad in ({"mode": "serve"}, {"mode": "train", "precision": "fp16"}, {"precision": "amp"}):
        with pytest.raises(ValueError):
            make_case({"network": "resnet18", "precision": "fp32", "batch": 8, **bad})
