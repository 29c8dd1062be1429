"""calibration.evaluate.strided_norm_copies: bad input is a one-line error."""
from calibration.evaluate import strided_norm_copies


def test_unknown_gpu_is_a_one_line_error(capsys):
    assert strided_norm_copies.main(["--gpu", "no-such-gpu"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no timing data for GPU 'no-such-gpu'") and err.count("\n") == 1
