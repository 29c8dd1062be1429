"""--report FILE.html: one self-contained page. Structure (always) and a real headless browser (when found)."""
import json
import os
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

import predictor
from predictor.cli import main
from predictor.html_report import READY_ID


class _Page(HTMLParser):
    """Counts what the tests check: tables and their body rows, svg elements, op groups, attributes with URLs."""

    def __init__(self):
        super().__init__()
        self.tables: list[int] = []      # body rows per table
        self.in_body = False
        self.svgs = 0
        self.op_groups = 0
        self.urls: list[str] = []
        self.scripts: list[dict] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        if tag == "table":
            self.tables.append(0)
        elif tag == "tbody":
            self.in_body = True
        elif tag == "tr" and self.in_body:
            self.tables[-1] += 1
        elif tag == "svg":
            self.svgs += 1
        elif tag == "g" and "op" in a.get("class", "").split():
            self.op_groups += 1
        elif tag == "script":
            self.scripts.append(a)
        for k, v in attrs:
            if k in ("src", "href", "xlink:href", "action") or (v and "url(" in v and "#" not in v):
                self.urls.append(f"{k}={v}")

    def handle_endtag(self, tag):
        if tag == "tbody":
            self.in_body = False


def _parse(text: str) -> _Page:
    p = _Page()
    p.feed(text)
    return p


def _data(text: str) -> dict:
    start = text.index('<script id="report-data" type="application/json">') + len(
        '<script id="report-data" type="application/json">')
    return json.loads(text[start:text.index("</script>", start)])


def test_prediction_report_structure(conv_model, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main([conv_model, "--gpu", "h200", "--batch", "2", "--report", str(out)]) == 0
    capsys.readouterr()
    text = out.read_text(encoding="utf-8")
    page = _parse(text)
    r = predictor.predict(conv_model, gpu="h200", batch=2)
    assert page.tables[-1] == len(r.ops) == 2                 # the per-op table: one row per op
    assert page.svgs == 2 and page.op_groups >= 2             # hierarchical and time-based rooflines, ops on them
    assert page.urls == [] and "http://" not in text and "https://" not in text and "<link" not in text
    assert not any("src" in s for s in page.scripts)          # inline script only
    data = _data(text)
    assert [o["name"] for o in data["ops"]] == sorted([o.cost.name for o in r.ops],
                                                      key=lambda n: -next(o.time_s for o in r.ops if o.cost.name == n))
    assert data["ops"][0]["flops"] in (221184, 4096)
    assert "Time per op class" in text and "Roofline charts" in text


def test_train_sweep_compare_validate_pages(conv_model, tmp_path, capsys):
    t = predictor.train_step(conv_model, gpu="h200", batch=2)
    text = t.to_html(str(tmp_path / "t.html"))
    assert os.path.exists(tmp_path / "t.html")
    page = _parse(text)
    assert "Training step phases" in text and "Memory" in text and page.tables[-1] == len(t.ops)
    assert "filled: forward" in text and "hollow: backward" in text      # every phase in the chart legend
    s = predictor.sweep(conv_model, gpus=["v100", "h200"], precisions=["fp16", "fp8"], batches=[4])
    page = _parse(s.to_html())
    assert page.tables[-1] == 4 and page.svgs == 1 and "n/a: v100 has no fp8" in s.to_html()
    a = predictor.predict(conv_model, gpu="h200", batch=2)
    c = predictor.compare(a, predictor.predict(conv_model, gpu="h200", batch=2, precision="fp16"))
    page = _parse(c.to_html())
    assert page.tables[-1] == len(c.raw.matches) and page.svgs == 2
    for p in (t.to_html(), s.to_html(), c.to_html()):
        assert "http://" not in p and "https://" not in p and _parse(p).urls == []


def test_report_path_errors(conv_model, tmp_path, capsys):
    assert main([conv_model, "--gpu", "h200", "--report", str(tmp_path / "r.txt")]) == 2
    assert "must end in .html" in capsys.readouterr().err
    assert main([conv_model, "--gpu", "h200", "--report", str(tmp_path / "no" / "r.html")]) == 2
    assert "no such directory" in capsys.readouterr().err


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.skipif(_browser() is None, reason="no headless browser (chromium / google-chrome) on PATH")
def test_report_renders_in_a_headless_browser(conv_model, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main([conv_model, "--gpu", "h200", "--batch", "2", "--mode", "train", "--report", str(out)]) == 0
    capsys.readouterr()
    n_ops = len(predictor.train_step(conv_model, gpu="h200", batch=2).ops)
    cmd = [_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--enable-logging=stderr",
           f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", out.as_uri()]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    dom = res.stdout
    # the page's script writes its marker only after initialising without error
    assert f'id="{READY_ID}"' in dom, res.stderr[-2000:]
    assert f'data-ops="{n_ops}"' in dom
    assert "Uncaught" not in res.stderr
