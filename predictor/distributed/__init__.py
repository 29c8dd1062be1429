"""Multi-GPU and multi-node training (``predict MODEL --mode train --gpus N``): systems as data
(``system``), NCCL's collectives (``collectives``), PyTorch DDP's bucketed all-reduce overlapping backward and
ZeRO/FSDP-style sharding (``ddp``), the hybrid synchronous-groups scheme (``hybrid``), the sweep over GPU
counts (``scaling``), its output (``report``, ``plot``) and the command line (``cli``).
"""
