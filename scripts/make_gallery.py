"""Regenerate the chart gallery in docs/gallery/ (CPU only, a few seconds per chart pair).

    python scripts/make_gallery.py [--out docs/gallery]

ResNet-50 (examples/resnet50.onnx) at batch 8 on the H200:
  resnet50_fp16_b8.png / -time.png            predict --precision fp16 --plot
  resnet50_fp16_b8_validate.png / -time.png   validate against calibration/data/h200/ncu/resnet50_fp16_b8.csv
  resnet50_fp32_vs_fp16_b8.png / -time.png    compare --precision fp32 --vs-precision fp16
DenseNet-121 (calibration/data/networks/onnx/densenet121.torchscript.onnx, 430 ops with kernels per series):
  densenet121_fp32_vs_fp16_b8.png / -time.png compare --precision fp32 --vs-precision fp16 (a chart of 2 x 430 ops)
GPT-2 (calibration/data/networks/onnx/gpt2.torchscript.onnx, a held-out network):
  gpt2_whatif_sweep.png                       sweep --gpu a100,h200 --precision fp32,tf32,amp,fp16,fp8 --batch 1,8,32
  gpt2_train_amp_b32.png / -time.png          --mode train --precision amp --batch 32 --loss mse
The HTML report (--report) of ResNet-50 fp16 batch 8, screenshot by a headless Chromium when one is on PATH:
  report_resnet50_fp16_b8.png
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "examples" / "resnet50.onnx"
GPT2 = REPO / "calibration" / "data" / "networks" / "onnx" / "gpt2.torchscript.onnx"
DENSENET = REPO / "calibration" / "data" / "networks" / "onnx" / "densenet121.torchscript.onnx"
NCU = REPO / "calibration" / "data" / "h200" / "ncu" / "resnet50_fp16_b8.csv"


def screenshot(page: Path, png: Path, size: str = "1400,2300") -> bool:
    """A headless Chromium's screenshot of ``page``; False (and a note) when no browser is on PATH."""
    import shutil
    import subprocess
    import tempfile

    browser = next((b for n in ("chromium", "chromium-browser", "google-chrome") if (b := shutil.which(n))), None)
    if browser is None:
        print(f"no headless browser on PATH: {png.name} not regenerated", file=sys.stderr)
        return False
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                        f"--user-data-dir={profile}", f"--window-size={size}", f"--screenshot={png}", page.as_uri()],
                       check=True, capture_output=True, timeout=120)
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=REPO / "docs" / "gallery")
    args = p.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from predictor.cli import main as predict

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    common = ["--gpu", "h200", "--batch", "8", "-o", str(out / "report.tmp")]
    runs = [
        [str(MODEL), "--precision", "fp16", "--plot", str(out / "resnet50_fp16_b8.png"), *common],
        ["validate", str(MODEL), "--ncu", str(NCU), "--precision", "fp16",
         "--plot", str(out / "resnet50_fp16_b8_validate.png"), *common],
        ["compare", str(MODEL), "--precision", "fp32", "--vs-precision", "fp16",
         "--plot", str(out / "resnet50_fp32_vs_fp16_b8.png"), *common],
        ["compare", str(DENSENET), "--precision", "fp32", "--vs-precision", "fp16",
         "--plot", str(out / "densenet121_fp32_vs_fp16_b8.png"), *common],
        [str(GPT2), "--gpu", "a100,h200", "--precision", "fp32,tf32,amp,fp16,fp8", "--batch", "1,8,32",
         "--plot", str(out / "gpt2_whatif_sweep.png"), "-o", str(out / "report.tmp")],
        [str(GPT2), "--gpu", "h200", "--mode", "train", "--precision", "amp", "--batch", "32", "--loss", "mse",
         "--plot", str(out / "gpt2_train_amp_b32.png"), "-o", str(out / "report.tmp")],
    ]
    try:
        for argv_ in runs:
            rc = predict(argv_)
            if rc:
                return rc
        report = out / "report_resnet50_fp16_b8.html"
        rc = predict([str(MODEL), "--precision", "fp16", "--report", str(report), *common])
        if rc:
            return rc
        screenshot(report, out / "report_resnet50_fp16_b8.png")
        report.unlink()
    finally:
        (out / "report.tmp").unlink(missing_ok=True)
    for f in sorted(out.glob("*.png")):
        print(f.relative_to(REPO) if f.is_relative_to(REPO) else f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
