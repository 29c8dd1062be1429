"""LLM serving measurements (prefill and KV-cache decode steps in CUDA graphs) and their decoder exports."""
