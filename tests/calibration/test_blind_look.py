"""calibration/evaluate/blind_look.py: a blind set's one look is written once, and bad input is a one-line error."""
import json
from pathlib import Path

from calibration.evaluate import blind_look

RECORD = Path(__file__).parents[2] / "calibration/data/h100/accuracy/blind18_once.json"


def test_unknown_network_or_gpu_is_a_one_line_error(tmp_path, capsys):
    assert blind_look.main(["--name", "b", "--networks", "no_such_net", "--gpu", "h100",
                            "--out", str(tmp_path / "r.json")]) == 2
    assert blind_look.main(["--name", "b", "--networks", "resnet50", "--gpu", "no_such_gpu",
                            "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("blind_look: error: ") for line in err)
    assert not (tmp_path / "r.json").exists()


def test_an_existing_record_is_never_overwritten(capsys):
    before = RECORD.read_bytes()
    assert blind_look.main(["--name", "blind18", "--networks", "qwen35_4l", "--gpu", "h100", "--out", str(RECORD)]) == 2
    assert "looked at once" in capsys.readouterr().err and RECORD.read_bytes() == before


def test_the_eighteenth_record_has_the_shape_blind_look_writes():
    doc = json.loads(RECORD.read_text())
    assert set(doc) == {"what", "summary", "cases", "autocast_cases", "control_cases"}
    assert {c["network"] for c in doc["control_cases"]} == set(blind_look.CONTROL)
    assert set(doc["summary"]) == {"blind18", "autocast (blind18)", "control",
                                   "roofline baseline (uncalibrated, ERT ceilings)", "eager (blind18)"}
