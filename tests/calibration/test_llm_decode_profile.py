"""The decode-step kernel profile's command line (calibration/llm/decode_profile.py; its GPU run is the device's)."""
from calibration.llm import decode_profile


def test_cases_parse_as_arch_batch_context():
    assert decode_profile._cases("gpt2:64:8192, opt:1:128") == [("gpt2", 64, 8192), ("opt", 1, 128)]
    assert decode_profile._cases(decode_profile.DEFAULT_CASES)[0] == ("gpt2", 64, 8192)


def test_malformed_cases_are_a_one_line_error(tmp_path, capsys):
    assert decode_profile.main(["--out", str(tmp_path), "--cases", "gpt2:64"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: --cases wants arch:batch:context")
    assert not any(tmp_path.iterdir())  # nothing written
