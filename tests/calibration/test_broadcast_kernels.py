"""calibration/evaluate/broadcast_kernels.py: the operand layouts of a broadcasting elementwise kernel."""
from calibration.evaluate.broadcast_kernels import broadcast_shape, layout, summary


def test_broadcast_shape_is_numpys():
    assert broadcast_shape([8, 1], [8, 64]) == (8, 64)
    assert broadcast_shape([64], [2, 8, 64]) == (2, 8, 64)
    assert broadcast_shape([3, 4], [5, 4]) is None


def test_layouts():
    assert layout([32, 128, 16384], [32, 128, 1], (32, 128, 16384)) == "row"
    assert layout([4096, 768], [768], (4096, 768)) == "lastdim"
    assert layout([32, 64, 56, 56], [1, 64, 1, 1], (32, 64, 56, 56)) == "channel"
    assert layout([16, 8, 512, 512], [16, 1, 512, 512], (16, 8, 512, 512)) == "other"
    assert layout([512, 1, 64], [1, 16, 64], (512, 16, 64)) == "outer"


def test_summary_takes_medians_per_precision_and_layout():
    rows = [{"network": n, "precision": "fp16", "layout": "row", "elements_per_s": e, "bytes_per_s": 4 * e}
            for n, e in (("a", 3e11), ("b", 4e11), ("b", 5e11))]
    assert summary(rows) == {"fp16 row": {"kernels": 3, "networks": 2, "G_elements_per_s": 400.0, "TB_per_s": 1.6}}
