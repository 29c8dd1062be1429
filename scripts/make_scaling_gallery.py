"""Scaling charts of the README's multi-GPU section (docs/gallery/scaling_*.png) and their tables.

    python scripts/make_scaling_gallery.py

DeepCAM-like segmentation (deepcam_lite at 768x1152, autocast, 2 samples per GPU) and the PI-GAN-like
generator + discriminator pair (examples/scaling, fp16, 4096 samples per GPU) on Summit up to the whole
machine, fully synchronous DDP beside the hybrid scheme (synchronous groups of one node, asynchronous
between groups); ResNet-50 on the generic InfiniBand H100 cluster to 131,072 GPUs with native and fp16
gradients. Prints each sweep's table (the README quotes them).
"""
from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from predictor.calibrate import Uncalibrated  # noqa: E402
from predictor.distributed import report  # noqa: E402
from predictor.distributed.ddp import DPConfig  # noqa: E402
from predictor.distributed.gradients import step_profile  # noqa: E402
from predictor.distributed.plot import draw, series_of  # noqa: E402
from predictor.distributed.scaling import sweep  # noqa: E402
from predictor.distributed.system import load_system  # noqa: E402
from predictor.fitted import bundled_calibration  # noqa: E402
from predictor.machine.profile import load_profile  # noqa: E402
from predictor.types import MemLevel  # noqa: E402

GALLERY = os.path.join(ROOT, "docs", "gallery")
SUMMIT = [1, 6, 24, 96, 384, 1536, 6144, 27504]


def _parts(paths, gpu, precision, batch=None, shapes=None, optimizer="adamw"):
    prof = load_profile(gpu)
    cal = bundled_calibration(prof) or Uncalibrated()
    return prof, [step_profile(os.path.join(ROOT, p), prof, precision, batch, shapes, cal, optimizer, loss="mse")
                  for p in paths]


def deepcam():
    prof, parts = _parts(["calibration/data/networks/onnx/deepcam_lite.torchscript.onnx"], "v100", "amp",
                         shapes={"input": (8, 16, 384, 576)})  # the export is fixed at 384x576: 8 of them = 2 x 768x1152 in pixels
    s = load_system("summit")
    hbm = prof.bandwidth(MemLevel.HBM)
    sync = sweep(parts, s, SUMMIT, DPConfig(), hbm, hybrid_group=6)
    fp16 = sweep(parts, s, SUMMIT, DPConfig(grad_comm="fp16"), hbm)
    print(report.to_table(sync))
    ser = series_of(sync, "synchronous DDP, fp32 gradients") + series_of(fp16, "synchronous DDP, fp16 gradients")
    draw(ser, "DeepCAM-like (deepcam_lite 768x1152, amp, 2/GPU) on Summit: predicted scaling",
         os.path.join(GALLERY, "scaling_deepcam_summit.png"))


def pigan():
    prof, parts = _parts(["examples/scaling/pigan_generator.onnx", "examples/scaling/pigan_discriminator.onnx"],
                         "v100", "fp16", batch=4096, optimizer="adam")
    s = load_system("summit")
    hbm = prof.bandwidth(MemLevel.HBM)
    sc = sweep(parts, s, SUMMIT, DPConfig(), hbm, hybrid_group=6)
    print(report.to_table(sc))
    draw(series_of(sc, "synchronous DDP"), "PI-GAN-like generator + discriminator (fp16, 4096/GPU, layer sizes "
         "assumed) on Summit: predicted scaling", os.path.join(GALLERY, "scaling_pigan_summit.png"),
         marks=[(27500, 0.931, "published: 93.1% at 27,500 GPUs")])


def resnet50():
    prof, parts = _parts(["examples/resnet50.onnx"], "h100", "amp", batch=32, optimizer="sgd")
    s = load_system("ib-cluster")
    counts = [1, 8, 64, 512, 4096, 32768, 131072]
    hbm = prof.bandwidth(MemLevel.HBM)
    a = sweep(parts, s, counts, DPConfig(), hbm)
    b = sweep(parts, s, counts, DPConfig(grad_comm="fp16"), hbm)
    print(report.to_table(a))
    draw(series_of(a, "DDP, fp32 gradients") + series_of(b, "DDP, fp16 gradients (compression hook)"),
         "ResNet-50 (amp, 32/GPU) on an InfiniBand cluster of HGX H100 nodes: predicted scaling",
         os.path.join(GALLERY, "scaling_resnet50_ib_cluster.png"))


if __name__ == "__main__":
    deepcam()
    pigan()
    resnet50()
