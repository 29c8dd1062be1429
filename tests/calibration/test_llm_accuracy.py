"""calibration/llm/accuracy.py: measured serving cases against predict serve's times (no GPU, no torch)."""
import json
import shutil

from calibration.llm import accuracy
from tests.test_serve import _decode_graph, _synth


def test_mape_of_prefill_and_decode_cases(tmp_path):
    onnx_dir = tmp_path / "onnx"
    onnx_dir.mkdir()
    shutil.copy(_synth(tmp_path), onnx_dir / "tiny.prefill.onnx")
    shutil.copy(_decode_graph(tmp_path), onnx_dir / "tiny.decode.onnx")
    cases = [{"kind": "prefill", "precision": "fp16", "batch": 1, "prompt": 32},
             {"kind": "decode", "precision": "fp16", "batch": 2, "context": 50},
             {"kind": "decode", "precision": "fp16", "batch": 4, "context": 50, "error": "skipped: over budget"}]
    from predictor.calibrate import Uncalibrated
    from predictor.fitted import bundled_calibration
    from predictor.machine.profile import load_profile

    prof = load_profile("h200")
    cal = bundled_calibration(prof) or Uncalibrated()
    predicted = [accuracy.predict_case({**c, "arch": "tiny"}, onnx_dir, prof, cal) for c in cases[:2]]
    # measured = 2x and 0.5x the prediction: errors -50% and +100%
    cases[0]["median_s"], cases[1]["median_s"] = 2 * predicted[0], 0.5 * predicted[1]
    (tmp_path / "serving.json").write_text(json.dumps({"archs": {"tiny": {"cases": cases}}}))
    res = accuracy.run(str(tmp_path))
    assert res["n_cases"] == 2                                   # the skipped case is not compared
    assert abs(res["mape_pct"]["prefill"] - 50.0) < 1e-9 and abs(res["mape_pct"]["decode"] - 100.0) < 1e-9
    assert abs(res["mape_pct"]["all"] - 75.0) < 1e-9 and res["worst_pct"]["all"] == res["mape_pct"]["decode"]


def test_committed_serving_run_is_guarded():
    """The H200 serving run (124 cases) against the fused-attention graphs with the bundled fit: prefill 16.9%, decode
    12.6% since the third 2026-12-05 refit (a shape-built causal mask is the kernel's is_causal, the packed
    projection's split is a view, grouped-query heads run one triangle per group; 27.2% / 15.6% before it, 30.8% /
    16.6% with the fourth 2026-12-04 refit, which priced the fused attention's extra kernel as a fixed cost instead
    of a second pass over the KV cache, 47.1% / 27.0% before the causal half of the tiles); held here against
    further regression. The serving target is 10%."""
    from calibration.fit.dataset import DATA

    data = DATA / "llm" / "h200"
    res = accuracy.run(str(data), onnx_dir=str(data / "onnx_fused"))
    assert res["n_cases"] == 124
    assert res["mape_pct"]["prefill"] <= 18.0 and res["mape_pct"]["decode"] <= 13.5
