"""Write the GPU profile library (predictor/machine/profiles/*.json) from the table below.

Every number is a vendor datasheet/whitepaper figure (dense tensor rates, i.e. half the "with sparsity"
figure), a spec-database figure for what datasheets leave out (SM count, boost clock, L2 size), or a stated
derivation (L1/L2 bandwidth per clock x SMs x clock; FP64/FP16 CUDA-core rates from the architecture's
per-SM ratio). The bundled v100, a100, h100, h200 and h200-datasheet profiles are not rewritten: this
script only adds aliases to them (their numbers stay as they are). Run: python calibration/scripts/gen_gpu_library.py
"""
from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "predictor" / "machine" / "profiles"
T, G, MiB = 1e12, 1e9, 1 << 20

# ----------------------------------------------------------------------------------------------- sources
SRC = {
    "v100": "NVIDIA Tesla V100 datasheet (SXM2/PCIe): https://images.nvidia.com/content/technologies/volta/pdf/"
            "volta-v100-datasheet-update-us-1165301-r5.pdf; Volta whitepaper: https://images.nvidia.com/content/"
            "volta-architecture/pdf/volta-architecture-whitepaper.pdf (80 SMs, 6 MB L2, 64 FP32 lanes per SM)",
    "t4": "NVIDIA T4 datasheet: https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/"
          "t4-tensor-core-datasheet-951643.pdf (8.1 TFLOPS FP32, 65 TFLOPS FP16 mixed, 130 TOPS INT8, 16 GB GDDR6 "
          "320 GB/s, 70 W)",
    "t4-db": "T4 SM count, boost clock and L2 size (40 SMs, 1590 MHz, 4 MB, TU104): https://sysrqmts.com/en/gpus/"
             "nvidia/tesla/t4 (TechPowerUp GPU database figures); Jia et al., Dissecting the NVidia Turing T4 GPU "
             "via Microbenchmarking, arXiv:1903.07486",
    "p100": "NVIDIA Tesla P100 datasheet: https://images.nvidia.com/content/tesla/pdf/nvidia-tesla-p100-datasheet.pdf "
            "(SXM2: 5.3/10.6/21.2 TFLOPS FP64/FP32/FP16, PCIe: 4.7/9.3/18.7; 732 GB/s HBM2 for 16 GB); Pascal "
            "whitepaper: https://images.nvidia.com/content/pdf/tesla/whitepaper/pascal-architecture-whitepaper.pdf "
            "(56 SMs, 4 MB L2, boost 1480 MHz SXM2)",
    "p100-db": "P100 PCIe boost clock 1303 MHz (TechPowerUp GPU database, https://www.techpowerup.com/gpu-specs/)",
    "p4": "NVIDIA Tesla P4 datasheet: https://images.nvidia.com/content/pdf/tesla/184457-Tesla-P4-Datasheet-NV-Final-"
          "Letter-Web.pdf (5.5 TFLOPS FP32, 22 TOPS INT8 (dp4a on CUDA cores), 8 GB GDDR5 192 GB/s, 50-75 W)",
    "p4-db": "P4 (GP104): 20 SMs, boost 1114 MHz, 2 MB L2 (TechPowerUp GPU database, https://www.techpowerup.com/"
             "gpu-specs/)",
    "a100": "NVIDIA A100 datasheet: https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
            "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf (40 GB HBM2 1555 GB/s; 80 GB PCIe 1935 GB/s, SXM "
            "2039 GB/s; same compute rates for PCIe and SXM); Ampere GA100 whitepaper: https://images.nvidia.com/"
            "aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf (108 SMs, 40 MB L2, "
            "1410 MHz); summary: https://glennklockwood.com/garden/processors/A100",
    "a10": "NVIDIA A10 datasheet: https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a10/pdf/"
           "datasheet-new/nvidia-a10-datasheet.pdf (31.2 TFLOPS FP32, TF32 62.5, BF16/FP16 125, INT8 250 dense; "
           "24 GB GDDR6 600 GB/s; 150 W)",
    "a10-db": "A10 (GA102): 72 SMs, boost 1695 MHz, 6 MB L2 (TechPowerUp GPU database, https://www.techpowerup.com/"
              "gpu-specs/; 72 x 128 lanes x 2 x 1.695 GHz = 31.2 TFLOPS, the datasheet rate)",
    "a30": "NVIDIA A30 datasheet: https://www.nvidia.com/content/dam/en-zz/Solutions/data-center/products/a30-gpu/pdf/"
           "a30-datasheet.pdf (FP64 5.2, FP64 tensor 10.3, FP32 10.3, TF32 82, BF16/FP16 165, INT8 330 dense; "
           "24 GB HBM2 933 GB/s; 165 W)",
    "a30-db": "A30 (GA100): 56 SMs, boost 1440 MHz, 24 MB L2 (TechPowerUp GPU database, https://www.techpowerup.com/"
              "gpu-specs/; 56 x 64 lanes x 2 x 1.44 GHz = 10.3 TFLOPS, the datasheet rate)",
    "l4": "NVIDIA L4 datasheet: https://resources.nvidia.com/en-us-data-center-overview/l4-gpu-datasheet (FP32 30.3 "
          "TFLOPS; TF32 120, FP16/BF16 242, FP8/INT8 485 with sparsity, so 60/121/242.5 dense; 24 GB GDDR6 300 GB/s; "
          "72 W); listing of the same figures: https://store.sourcecode.com/en-us/bg-bucket-compare/125/9820",
    "l4-db": "L4 (AD104): boost 2040 MHz, 48 MB L2 (https://fpsbench.com/compare/gpu/nvidia-l4-vs-nvidia-tesla-m40, "
             "TechPowerUp figures); 58 SMs = 30.3 TFLOPS / (128 lanes x 2 x 2.04 GHz) (7424 CUDA cores)",
    "l40s": "NVIDIA L40S datasheet: https://resources.nvidia.com/en-us-l40s/l40s-datasheet-28413 (FP32 91.6 TFLOPS; "
            "TF32 183, BF16/FP16 362.05, FP8 733, INT8 733 dense; 48 GB GDDR6 864 GB/s; 142 SMs (568 tensor cores); "
            "350 W); https://grokipedia.com/page/NVIDIA_L4_vs_L40S",
    "l40s-db": "L40S (AD102): boost 2520 MHz, 96 MB L2 (TechPowerUp GPU database, https://www.techpowerup.com/"
               "gpu-specs/; 142 x 128 x 2 x 2.52 GHz = 91.6 TFLOPS, the datasheet rate)",
    "rtx4090": "NVIDIA Ada Lovelace architecture whitepaper, appendix table for GeForce RTX 4090: https://images."
               "nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf (128 SMs, boost 2520 MHz, "
               "72 MB L2, 24 GB GDDR6X 1008 GB/s; FP32 82.6; tensor TF32 82.6, FP16/BF16 with FP32 accumulate 165.2, "
               "FP8 with FP32 accumulate 330.3, INT8 660.6 dense; 450 W)",
    "h100": "NVIDIA H100 datasheet: https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet "
            "(PCIe: FP64 25.6, FP64 tensor 51.2, FP32 51.2, TF32 756, BF16/FP16 1513, FP8/INT8 3026 with sparsity; "
            "80 GB HBM2e 2.0 TB/s, 350 W. NVL: FP64 30, FP64 tensor 60, FP32 60, TF32 835, BF16/FP16 1671, FP8/INT8 "
            "3341 with sparsity; 94 GB HBM3 3.9 TB/s); Hopper whitepaper: https://resources.nvidia.com/en-us-tensor-"
            "core/gtc22-whitepaper-hopper (114 SMs PCIe, 132 SXM5, 50 MB L2)",
    "h100-db": "H100 boost clocks (PCIe 1755 MHz, NVL 1785 MHz; TechPowerUp GPU database, https://www.techpowerup.com/"
               "gpu-specs/); 114 x 128 x 2 x 1.755 GHz = 51.2 TFLOPS, 132 x 128 x 2 x 1.785 GHz = 60.3 TFLOPS",
    "gh200": "NVIDIA GH200 Grace Hopper Superchip datasheet: https://resources.nvidia.com/en-us-grace-cpu/grace-hopper-"
             "superchip (GPU: FP64 34, FP64 tensor 67, FP32 67, TF32 494, BF16/FP16 990, FP8/INT8 1979 dense; 96 GB "
             "HBM3 4 TB/s or 144 GB HBM3e 4.9 TB/s); an H100 GPU with 132 SMs at 1980 MHz as the H100 SXM5",
    "b200": "HGX B200 per GPU (NVIDIA HGX B200 datasheet figures at 1000 W as summarised at https://glennklockwood.com/"
            "garden/processors/B200: FP64 40, FP32 80, TF32 1100, FP16/BF16 2250, FP8/INT8 4500 TFLOPS dense; 8 TB/s; "
            "180 GB HBM3e per GPU on HGX); GB200 NVL72 per GPU at 1200 W: FP64 45, FP32 90, TF32 1250, FP16/BF16 "
            "2500, FP8/INT8 5000 dense; 186 GB HBM3e (13.4 TB / 72)",
    "b200-sm": "148 SMs (2 dies x 74 enabled): https://chipsandcheese.com/p/nvidias-b200-keeping-the-cuda-juggernaut; "
               "126 MB L2: https://app.daily.dev/posts/the-evolution-of-nvidia-blackwell-gpu-memory-architecture-"
               "zp2tjxtaw",
}
ASSUMED = {
    "assumed-launch": {"kind": "assumed", "reference": "eager kernel launch overhead not measured on this GPU: the "
                       "time-based roofline's 4.2 us is assumed"},
    "assumed-gap": {"kind": "assumed", "reference": "per-kernel gap inside a CUDA graph replay, not measured on this "
                    "GPU: the value seen on an H200 is assumed"},
}
L2_PER_SM_CLK = 5120 / 108  # GA100 whitepaper: 5120 bytes/clock L2 read bandwidth over 108 SMs


def _gpu(name, full, aliases, arch, cc, sms, clock_mhz, l2_mib, mem_gb, hbm_gbps, peaks, sheet, db=None,
         l2_rule="per-sm", notes="", tdp_w=None, fp32_lanes=None, sustained=None):
    """``sustained``: (MHz, source text) of a published sustained (power-limited) SM clock, or None."""
    return dict(name=name, full=full, aliases=aliases, arch=arch, cc=cc, sms=sms, clock=clock_mhz * 1e6,
                l2=int(l2_mib * MiB), mem=mem_gb * G, hbm=hbm_gbps * G, peaks=peaks, sheet=sheet, db=db or sheet,
                l2_rule=l2_rule, notes=notes, tdp_w=tdp_w, sustained=sustained)


T4_SUSTAINED = (900, "SM clock a T4 holds under sustained inference load at its 70 W limit: ~900 MHz (BERT on a single "
                     "T4, clocks set to 1590 MHz with nvidia-smi -ac, 'dropping down to ~900 MHz in a SingleStream "
                     "run': https://github.com/mlcommons/inference_results_v0.5/issues/20, 2020-06-16); NVIDIA's "
                     "answer on the T4's sustained cuBLAS rate (~24 of 65 TFLOP/s fp16 on 4096^3 GEMMs, 'arising due "
                     "to power capping of the GPU'): https://forums.developer.nvidia.com/t/about-gpu-peak-performance/"
                     "264462")


# peaks: {(precision, unit): (TFLOP/s, "sheet" | "derived: how")}
def _p(**kw):
    out = {}
    for key, v in kw.items():
        prec, unit = key.split("_")
        out[(prec, unit)] = v if isinstance(v, tuple) else (v, "sheet")
    return out


HALF64 = "1/64 of the FP32 rate (GA10x/AD10x SMs: 2 FP64 lanes per 128 FP32 lanes; whitepaper)"
HALF32 = "1/32 of the FP32 rate (TU104/GP104 SMs: 2 FP64 lanes per 64/128 FP32 lanes; whitepaper)"
FP16_1X = "equal to the FP32 rate (GA10x/AD10x run FP16/BF16 non-tensor math at the FP32 rate; whitepaper)"
FP16_2X = "2x the FP32 rate (packed half2, as the datasheet lists for H100/H200 and Turing; whitepaper)"

V100_PCIE = _p(fp64_cuda=7.0, fp32_cuda=14.0, fp16_cuda=28.0, fp16_tensor=112.0)
A100 = _p(fp64_cuda=9.7, fp64_tensor=19.5, fp32_cuda=19.5, tf32_tensor=156.0, fp16_cuda=78.0, fp16_tensor=312.0,
          bf16_cuda=39.0, bf16_tensor=312.0, int8_tensor=624.0)
H100_PCIE = _p(fp64_cuda=25.6, fp64_tensor=51.2, fp32_cuda=51.2, tf32_tensor=378.0, fp16_cuda=(102.4, FP16_2X),
               fp16_tensor=756.5, bf16_cuda=(102.4, FP16_2X), bf16_tensor=756.5, fp8_tensor=1513.0,
               int8_tensor=1513.0)
H100_NVL = _p(fp64_cuda=30.0, fp64_tensor=60.0, fp32_cuda=60.0, tf32_tensor=417.5, fp16_cuda=(120.0, FP16_2X),
              fp16_tensor=835.5, bf16_cuda=(120.0, FP16_2X), bf16_tensor=835.5, fp8_tensor=1670.5,
              int8_tensor=1670.5)
GH200 = _p(fp64_cuda=34.0, fp64_tensor=67.0, fp32_cuda=67.0, tf32_tensor=494.0, fp16_cuda=(134.0, FP16_2X),
           fp16_tensor=990.0, bf16_cuda=(134.0, FP16_2X), bf16_tensor=990.0, fp8_tensor=1979.0, int8_tensor=1979.0)
BW_2X = "2x the FP32 rate, assumed as on Hopper (not in the Blackwell datasheets)"
B200 = _p(fp64_cuda=40.0, fp64_tensor=40.0, fp32_cuda=80.0, tf32_tensor=1100.0, fp16_cuda=(160.0, BW_2X),
          fp16_tensor=2250.0, bf16_cuda=(160.0, BW_2X), bf16_tensor=2250.0, fp8_tensor=4500.0, int8_tensor=4500.0)
GB200 = _p(fp64_cuda=45.0, fp64_tensor=45.0, fp32_cuda=90.0, tf32_tensor=1250.0, fp16_cuda=(180.0, BW_2X),
           fp16_tensor=2500.0, bf16_cuda=(180.0, BW_2X), bf16_tensor=2500.0, fp8_tensor=5000.0, int8_tensor=5000.0)

GPUS = [
    _gpu("v100-pcie-16gb", "NVIDIA Tesla V100 PCIe 16GB", ["Tesla V100-PCIE-16GB", "v100-pcie", "v100-pcie-16g"],
         "volta", "7.0", 80, 1380, 6, 16, 900, V100_PCIE, "v100", l2_rule="volta", tdp_w=250),
    _gpu("v100-pcie-32gb", "NVIDIA Tesla V100 PCIe 32GB", ["Tesla V100-PCIE-32GB", "v100-pcie-32g"],
         "volta", "7.0", 80, 1380, 6, 32, 900, V100_PCIE, "v100", l2_rule="volta", tdp_w=250),
    _gpu("t4", "NVIDIA T4 16GB", ["Tesla T4", "t4-16gb", "tesla-t4"], "turing", "7.5", 40, 1590, 4, 16, 320,
         _p(fp64_cuda=(8.1 / 32, HALF32), fp32_cuda=8.1, fp16_cuda=(16.2, FP16_2X), fp16_tensor=65.0,
            int8_tensor=130.0), "t4", "t4-db", l2_rule="volta", tdp_w=70, sustained=T4_SUSTAINED,
         notes="Turing: no bf16, tf32 or fp8 tensor cores. Power-limited at 70 W: under sustained load the SM clock "
               "falls from the 1590 MHz boost to ~900 MHz (source sustained-clock); NVIDIA publishes no sustained "
               "clock. The transfer scales compute and L1/L2 ceilings by 900/1590."),
    _gpu("p100-sxm2-16gb", "NVIDIA Tesla P100 SXM2 16GB", ["Tesla P100-SXM2-16GB", "p100", "p100-sxm2", "tesla-p100"],
         "pascal", "6.0", 56, 1480, 4, 16, 732, _p(fp64_cuda=5.3, fp32_cuda=10.6, fp16_cuda=21.2), "p100",
         l2_rule="volta", tdp_w=300, notes="Pascal: no tensor cores (fp16/bf16/tf32/fp8/int8 precisions are n/a)."),
    _gpu("p100-pcie-16gb", "NVIDIA Tesla P100 PCIe 16GB", ["Tesla P100-PCIE-16GB", "p100-pcie"], "pascal", "6.0", 56,
         1303, 4, 16, 732, _p(fp64_cuda=4.7, fp32_cuda=9.3, fp16_cuda=18.7), "p100", "p100-db", l2_rule="volta",
         tdp_w=250, notes="Pascal: no tensor cores (fp16/bf16/tf32/fp8/int8 precisions are n/a)."),
    _gpu("p4", "NVIDIA Tesla P4 8GB", ["Tesla P4", "tesla-p4", "p4-8gb"], "pascal", "6.1", 20, 1114, 2, 8, 192,
         _p(fp64_cuda=(5.5 / 32, HALF32), fp32_cuda=5.5, int8_cuda=22.0), "p4", "p4-db", l2_rule="volta", tdp_w=75,
         notes="Pascal GP104: no tensor cores; int8 runs as dp4a on CUDA cores (22 TOPS), which the int8 precision "
               "policy (tensor-core GEMMs) does not use, so int8 is n/a; fp16 runs at 1/64 rate and is not listed. "
               "Power-limited (50/75 W, passive): NVIDIA publishes no sustained clock; the transfer takes it, as "
               "every board of <= 75 W without one, at the T4's measured sustained / boost clock (900/1590: 631 "
               "MHz; predictor/machine/transfer.py)."),
    _gpu("a100-sxm4-40gb", "NVIDIA A100 SXM4 40GB", ["NVIDIA A100-SXM4-40GB", "a100-40gb", "a100-sxm-40gb"],
         "ampere", "8.0", 108, 1410, 40, 40, 1555, A100, "a100", l2_rule="ga100", tdp_w=400),
    _gpu("a100-pcie-40gb", "NVIDIA A100 PCIe 40GB", ["NVIDIA A100-PCIE-40GB", "a100-pcie"], "ampere", "8.0", 108,
         1410, 40, 40, 1555, A100, "a100", l2_rule="ga100", tdp_w=250),
    _gpu("a100-pcie-80gb", "NVIDIA A100 PCIe 80GB", ["NVIDIA A100 80GB PCIe", "a100-80gb-pcie"], "ampere", "8.0", 108,
         1410, 40, 80, 1935, A100, "a100", l2_rule="ga100", tdp_w=300),
    _gpu("a10", "NVIDIA A10 24GB", ["NVIDIA A10", "a10-24gb"], "ampere", "8.6", 72, 1695, 6, 24, 600,
         _p(fp64_cuda=(31.2 / 64, HALF64), fp32_cuda=31.2, tf32_tensor=62.5, fp16_cuda=(31.2, FP16_1X),
            fp16_tensor=125.0, bf16_cuda=(31.2, FP16_1X), bf16_tensor=125.0, int8_tensor=250.0), "a10", "a10-db",
         tdp_w=150, notes="GA102: no fp64 tensor cores, no fp8."),
    _gpu("a30", "NVIDIA A30 24GB", ["NVIDIA A30", "a30-24gb"], "ampere", "8.0", 56, 1440, 24, 24, 933,
         _p(fp64_cuda=5.2, fp64_tensor=10.3, fp32_cuda=10.3, tf32_tensor=82.0,
            fp16_cuda=(41.3, "4x the FP32 rate (GA100, as the A100 datasheet's 78 = 4 x 19.5)"), fp16_tensor=165.0,
            bf16_cuda=(20.6, "2x the FP32 rate (GA100, as the A100 datasheet's 39 = 2 x 19.5)"), bf16_tensor=165.0,
            int8_tensor=330.0), "a30", "a30-db", tdp_w=165, notes="No fp8 tensor cores on Ampere."),
    _gpu("l4", "NVIDIA L4 24GB", ["NVIDIA L4", "l4-24gb"], "ada", "8.9", 58, 2040, 48, 24, 300,
         _p(fp64_cuda=(30.3 / 64, HALF64), fp32_cuda=30.3, tf32_tensor=60.0, fp16_cuda=(30.3, FP16_1X),
            fp16_tensor=121.0, bf16_cuda=(30.3, FP16_1X), bf16_tensor=121.0, fp8_tensor=242.5, int8_tensor=242.5),
         "l4", "l4-db", tdp_w=72,
         notes="Power-limited at 72 W: NVIDIA publishes no sustained clock; peaks at the 2040 MHz boost. The "
               "transfer takes it, as every board of <= 75 W without a published sustained clock, at the T4's "
               "measured sustained / boost clock (900/1590: 1155 MHz; predictor/machine/transfer.py)."),
    _gpu("l40s", "NVIDIA L40S 48GB", ["NVIDIA L40S", "l40s-48gb"], "ada", "8.9", 142, 2520, 96, 48, 864,
         _p(fp64_cuda=(91.6 / 64, HALF64), fp32_cuda=91.6, tf32_tensor=183.0, fp16_cuda=(91.6, FP16_1X),
            fp16_tensor=362.05, bf16_cuda=(91.6, FP16_1X), bf16_tensor=362.05, fp8_tensor=733.0, int8_tensor=733.0),
         "l40s", "l40s-db", tdp_w=350),
    _gpu("rtx4090", "NVIDIA GeForce RTX 4090 24GB", ["NVIDIA GeForce RTX 4090", "rtx-4090", "geforce-rtx-4090", "4090"],
         "ada", "8.9", 128, 2520, 72, 24, 1008,
         _p(fp64_cuda=(82.6 / 64, HALF64), fp32_cuda=82.6, tf32_tensor=82.6, fp16_cuda=(82.6, FP16_1X),
            fp16_tensor=165.2, bf16_cuda=(82.6, FP16_1X), bf16_tensor=165.2, fp8_tensor=330.3, int8_tensor=660.6),
         "rtx4090", tdp_w=450,
         notes="GeForce: tensor FP16/BF16/FP8 with FP32 accumulate (what PyTorch's GEMMs use) at half the FP16-"
               "accumulate rate."),
    _gpu("h100-pcie", "NVIDIA H100 PCIe 80GB", ["NVIDIA H100 PCIe", "h100-pcie-80gb"], "hopper", "9.0", 114, 1755,
         50, 80, 2000, H100_PCIE, "h100", "h100-db", l2_rule="gh100", tdp_w=350),
    _gpu("h100-nvl", "NVIDIA H100 NVL 94GB", ["NVIDIA H100 NVL", "h100-nvl-94gb"], "hopper", "9.0", 132, 1785, 50, 94,
         3900, H100_NVL, "h100", "h100-db", l2_rule="gh100", tdp_w=400),
    _gpu("gh200", "NVIDIA GH200 Grace Hopper 96GB HBM3 (GPU)", ["NVIDIA GH200 480GB", "gh200-96gb",
         "grace-hopper"], "hopper", "9.0", 132, 1980, 50, 96, 4000, GH200, "gh200", l2_rule="gh100",
         notes="L2 taken as the H100 SXM5's 50 MB (same GH100 configuration; not in the GH200 datasheet)."),
    _gpu("gh200-144gb", "NVIDIA GH200 Grace Hopper 144GB HBM3e (GPU)", ["NVIDIA GH200 144G HBM3e", "gh200-hbm3e"],
         "hopper", "9.0", 132, 1980, 50, 144, 4900, GH200, "gh200", l2_rule="gh100",
         notes="L2 taken as the H100 SXM5's 50 MB (same GH100 configuration; not in the GH200 datasheet)."),
    _gpu("b200", "NVIDIA B200 (HGX, 1000 W) 180GB", ["NVIDIA B200", "b200-180gb", "hgx-b200"], "blackwell", "10.0",
         148, 80e12 / (148 * 256) / 1e6, 126, 180, 8000, B200, "b200", "b200-sm",
         notes="Datasheet figures only: nothing measured. sm_clock_hz derived from the FP32 rate (80 TFLOPS / "
               "(148 SMs x 128 lanes x 2)); FP4/FP6 not modelled."),
    _gpu("gb200", "NVIDIA GB200 NVL72 Blackwell GPU (1200 W) 186GB", ["NVIDIA GB200", "gb200-nvl72"], "blackwell",
         "10.0", 148, 90e12 / (148 * 256) / 1e6, 126, 186, 8000, GB200, "b200", "b200-sm",
         notes="Datasheet figures only: nothing measured. sm_clock_hz derived from the FP32 rate (90 TFLOPS / "
               "(148 SMs x 128 lanes x 2)); FP4/FP6 not modelled."),
]

# aliases added to the bundled profiles (their numbers are not touched)
EXTRA_ALIASES = {
    "v100.json": ["Tesla V100-SXM2-16GB", "v100-sxm2-16g"],
    "a100.json": ["NVIDIA A100-SXM4-80GB", "a100-sxm-80gb"],
    "h100.json": ["NVIDIA H100 80GB HBM3", "h100-sxm-80gb"],
    "h200.json": ["NVIDIA H200", "NVIDIA H200 SXM"],
}


def _l2(g) -> tuple[float, str]:
    clk = g["clock"]
    if g["l2_rule"] == "volta":  # from the published ERT L2 of a V100 SXM2 (2996.8 GB/s at 80 SMs, 1.53 GHz)
        per = 2996.8e9 / (80 * 1.53e9)
        return per * g["sms"] * clk, (f"{per:.2f} bytes/clock/SM (the published ERT L2 ceiling of a V100 SXM2, "
                                      f"2996.8 GB/s / (80 SMs x 1.53 GHz)) x {g['sms']} SMs x {clk / 1e9:.4g} GHz; "
                                      "a measured rate carried over by SMs and clock, not measured on this GPU")
    if g["l2_rule"] in ("ga100", "gh100"):
        return 5120 * clk, (f"5120 bytes/clock L2 read bandwidth (GA100 whitepaper; the bundled a100/h100 rule) x "
                            f"{clk / 1e9:.4g} GHz, not measured")
    return L2_PER_SM_CLK * g["sms"] * clk, (f"5120/108 bytes/clock/SM (GA100 whitepaper's 5120 bytes/clock over its "
                                            f"108 SMs, assumed for this part) x {g['sms']} SMs x {clk / 1e9:.4g} GHz, "
                                            "not measured")


def _value(v, src):
    return {"value": v, "source": src}


def build(g) -> dict:
    sheet, db = g["sheet"], g["db"]
    sources = {"datasheet": {"kind": "datasheet", "reference": SRC[sheet]}}
    if db != sheet:
        sources["spec-db"] = {"kind": "datasheet", "reference": SRC[db]}
    spec = "spec-db" if db != sheet else "datasheet"
    clk = g["clock"]
    peaks: dict = {}
    sheet_peaks: dict = {}
    for (prec, unit), (tflops, how) in g["peaks"].items():
        v = float(tflops * T)
        if how == "sheet":
            peaks.setdefault(prec, {})[unit] = _value(v, "datasheet")
            sheet_peaks.setdefault(prec, {})[unit] = v
        else:
            key = f"derived-{prec}-{unit}"
            sources[key] = {"kind": "derived", "reference": how}
            peaks.setdefault(prec, {})[unit] = _value(v, key)
    l1 = 128 * g["sms"] * clk
    sources["derived-l1"] = {"kind": "derived", "reference": f"128 bytes/clock/SM (the Volta-to-Hopper whitepaper L1 "
                             f"load rate, assumed for this part) x {g['sms']} SMs x {clk / 1e9:.4g} GHz boost clock, "
                             "not measured"}
    l2, how = _l2(g)
    sources["derived-l2"] = {"kind": "derived-measured" if g["l2_rule"] == "volta" else "derived", "reference": how}
    sources.update(ASSUMED)
    clock_src = spec
    if g["arch"] == "blackwell":
        sources["derived-clock"] = {"kind": "derived", "reference": "FP32 datasheet rate / (148 SMs x 128 lanes x 2 "
                                    "FLOP): the clock the FP32 figure implies"}
        clock_src = "derived-clock"
    doc = {
        "schema_version": 1,
        "name": g["name"],
        "full_name": g["full"],
        "aliases": g["aliases"],
        "arch": g["arch"],
        "compute_capability": g["cc"],
        "sm_count": _value(g["sms"], spec if g["arch"] != "blackwell" else "spec-db"),
        "sm_clock_hz": _value(round(clk, 3), clock_src),
        **({"sustained_sm_clock_hz": _value(g["sustained"][0] * 1e6, "sustained-clock")} if g["sustained"] else {}),
        "l2_bytes": _value(g["l2"], spec),
        "hbm_bytes": _value(g["mem"], "datasheet"),
        "launch_overhead_s": _value(4.2e-06, "assumed-launch"),
        "kernel_gap_s": _value(1e-06, "assumed-gap"),
        "peak_flops_per_s": peaks,
        "bandwidth_Bps": {"L1": _value(l1, "derived-l1"), "L2": _value(l2, "derived-l2"),
                          "HBM": _value(g["hbm"], "datasheet")},
        "datasheet": {"peak_flops_per_s": sheet_peaks, "bandwidth_Bps": {"HBM": g["hbm"]},
                      **({"tdp_w": g["tdp_w"]} if g["tdp_w"] else {})},
        "sources": sources,
    }
    if g["sustained"]:
        sources["sustained-clock"] = {"kind": "published-measurement", "reference": g["sustained"][1]}
    if g["notes"]:
        doc["notes"] = g["notes"]
    return doc


def main() -> None:
    names = set()
    for g in GPUS:
        assert g["name"] not in names
        names.add(g["name"])
        (OUT / f"{g['name']}.json").write_text(json.dumps(build(g), indent=2) + "\n")
    # the V100 SXM2 32 GB: the bundled v100 (SXM2 16 GB) with its published ERT ceilings, 32 GB of memory
    v100 = json.loads((OUT / "v100.json").read_text())
    v100.update(name="v100-sxm2-32gb", full_name="NVIDIA Tesla V100 SXM2 32GB",
                aliases=["Tesla V100-SXM2-32GB", "v100-32gb", "v100-sxm2-32g"])
    v100["hbm_bytes"] = _value(32e9, "datasheet")
    v100["memory_bytes"] = _value(32 << 30, "datasheet")
    v100["notes"] = ("Same GV100 SXM2 part, clocks and 900 GB/s HBM2 as the 16 GB board: the ceilings are the "
                     "published ERT run of a V100 SXM2 (the bundled v100's). " + v100["notes"])
    (OUT / "v100-sxm2-32gb.json").write_text(json.dumps(v100, indent=2) + "\n")
    for fname, extra in EXTRA_ALIASES.items():
        path = OUT / fname
        text = path.read_text()
        doc = json.loads(text)
        new = [a for a in extra if a not in doc["aliases"]]
        if not new:
            continue
        old_block = json.dumps(doc["aliases"], indent=2).replace("\n", "\n  ")
        doc["aliases"] += new
        new_block = json.dumps(doc["aliases"], indent=2).replace("\n", "\n  ")
        assert old_block in text, fname
        path.write_text(text.replace(old_block, new_block, 1))  # only the alias list changes
    print(f"wrote {len(GPUS)} profiles and aliases of {len(EXTRA_ALIASES)} bundled ones under {OUT}")


if __name__ == "__main__":
    main()
