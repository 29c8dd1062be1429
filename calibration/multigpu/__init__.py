"""Multi-GPU measurements (issue: data-parallel scaling on 2, 4 and 8 GPUs of one host).

``nccl_sweep``: NCCL all-reduce / reduce-scatter / all-gather bus bandwidth per message size (4 KB - 4 GB,
fp32 and bf16) and ``nvidia-smi topo -m``; ``ddp_step``: DDP training steps of the zoo networks, one process
per GPU (torchrun). Both keep NVLink multicast off (``common.SAFE_ENV``) and create no multicast objects;
both have a ``--dry-run-cpu`` mode (gloo, 2 processes) that runs every code path on a CPU.
Importable without torch: torch is imported inside the functions that need it.
"""
