"""Notebook-style tour of the Python API (each block a notebook cell). The tests run this file
(tests/test_api.py::test_docs_example_runs); run it yourself with ``python docs/api_example.py``."""
# %% one forward pass: the same numbers and table as `predict examples/resnet50.onnx --gpu h200 ...`
from pathlib import Path

import predictor

REPO = Path(__file__).resolve().parents[1]
RESNET = str(REPO / "examples" / "resnet50.onnx")

r = predictor.predict(RESNET, gpu="h200", precision="fp16", batch=8)
print(f"{r.model} {r.precision} batch {r.batch} on {r.gpu}: {r.total_time_s * 1e3:.3f} ms, "
      f"{r.batch / r.total_time_s:,.0f} samples/s")
for row in r.by_class()[:3]:                       # where the time goes, per op class
    print(f"  {row.op_class:<12} {row.share:6.1%}  {row.ops} ops")
print(r.to_table(top=3))                           # what `predict ... --top 3` prints

# %% results are data: a dict (the --format json document), JSON text, a DataFrame (pandas, optional)
doc = r.to_dict()
assert doc["total_time_s"] == r.total_time_s and len(doc["ops"]) == len(r.ops)
try:
    df = r.to_pandas()
    print(df.sort_values("time_s", ascending=False)[["name", "op_class", "time_s", "bound"]].head(3))
except ImportError as e:                           # pandas is an optional extra
    print(e)

# %% what-if: fp32 against fp16, and a small sweep over GPUs and batch sizes
c = predictor.compare(predictor.predict(RESNET, gpu="h200", precision="fp32", batch=8), r)
print(f"fp16 over fp32: {c.speedup:.2f}x")
s = predictor.sweep(RESNET, gpus=["a100", "h200"], precisions=["fp16"], batches=[1, 32])
for row in s.rows:
    print(f"  {row.label:<22} {row.total_time_s * 1e3:8.3f} ms  {row.speedup_per_sample:.2f}x per sample")

# %% one training step, and the self-contained HTML report of any result
t = predictor.train_step(RESNET, gpu="h200", precision="amp", batch=8, optimizer="sgd")
print(f"training step {t.total_time_s * 1e3:.3f} ms, peak memory {t.raw.memory.peak_bytes / 1e9:.2f} GB")
html = t.to_html()                                 # or t.to_html("step.html") to write the file
assert html.startswith("<!DOCTYPE html>")
