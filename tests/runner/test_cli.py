"""The command's error policy: eegbench's own errors are a message and an exit code, any
other exception is a bug and keeps its traceback."""
import pytest

from runner import cli
from validation.errors import InfrastructureError, UserError


def test_bad_option_values_name_the_field(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EEGBENCH_RUNS", str(tmp_path))
    assert cli.main(["eval", "--model", "oracle", "--jobs", "0"]) == cli.EXIT_USER_ERROR
    assert "jobs" in capsys.readouterr().err
    assert cli.main(["eval", "--model", "oracl"]) == cli.EXIT_USER_ERROR
    assert "unknown model spec 'oracl'" in capsys.readouterr().err
    assert cli.main(["eval", "--model", "oracle", "--run", "a/b"]) == cli.EXIT_USER_ERROR
    assert "RUN='a/b'" in capsys.readouterr().err


def test_a_missing_run_is_a_user_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EEGBENCH_RUNS", str(tmp_path))
    assert cli.main(["logs", "nope"]) == cli.EXIT_USER_ERROR
    assert "no run named 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize(("error", "code"), [(UserError("bad"), cli.EXIT_USER_ERROR),
                                              (InfrastructureError("down"), cli.EXIT_INFRASTRUCTURE)])
def test_own_errors_become_exit_codes(monkeypatch, error, code):
    def fail(args, env):
        raise error

    monkeypatch.setitem(cli.COMMANDS, "data", fail)
    assert cli.main(["data"]) == code


def test_a_bug_keeps_its_traceback(monkeypatch):
    def bug(args, env):
        raise KeyError("a bug in eegbench")

    monkeypatch.setitem(cli.COMMANDS, "data", bug)
    with pytest.raises(KeyError, match="a bug in eegbench"):
        cli.main(["data"])
