"""calibration/networks/batch_scaling.py: a committed graph whose work does not grow with the batch is listed."""
from calibration.networks import batch_scaling


def test_pixtral_graph_is_listed_and_resnet50_is_not(capsys):
    assert batch_scaling.main(["pixtral_vision", "resnet50"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("pixtral_vision: FLOPs x1.00 from batch 1 to 2") and out[-1].startswith("1 graph(s)")
    assert batch_scaling.main(["resnet50"]) == 0
    f1, f2 = batch_scaling.total_flops("resnet50", 1), batch_scaling.total_flops("resnet50", 2)
    assert f2 == 2 * f1


def test_unknown_name_is_a_one_line_error(capsys):
    assert batch_scaling.main(["nosuchnet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown network 'nosuchnet'" in err
