"""Progress bars: on a terminal only, never with --quiet or when stderr is piped."""
import io
import sys

from predictor.cli import main
from predictor.progress import bar, wanted


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_wanted():
    assert not wanted(stream=io.StringIO())            # piped / redirected
    assert wanted(stream=_Tty()) and not wanted(quiet=True, stream=_Tty())


def test_bar_writes_only_when_enabled(capsys):
    with bar(3, "sweep", enabled=False) as b:
        b.update(1)
    assert capsys.readouterr().err == ""
    with bar(3, "sweep", enabled=True) as b:
        for _ in range(3):
            b.update(1)
    assert "sweep" in capsys.readouterr().err


def test_sweep_progress_on_a_terminal_and_quiet(conv_model, capsys, monkeypatch):
    args = [conv_model, "--gpu", "v100,h200", "--batch", "1,2"]
    assert main(args) == 0
    cap = capsys.readouterr()
    assert cap.err == "" and "4 settings" in cap.out          # stderr is not a terminal under pytest: no bar
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert main(args) == 0
    cap = capsys.readouterr()
    assert "sweep" in cap.err and "4 settings" in cap.out      # the bar on stderr, the table unchanged on stdout
    assert main(args + ["--quiet"]) == 0
    assert capsys.readouterr().err == ""
