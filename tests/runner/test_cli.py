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


# --- epochs: eval --epochs, logs --epoch, show CASE@K / --epoch ----------------------------------

def epoch_run(runs):
    """A run holding case a at epochs 1 and 2 (records written through the store)."""
    from runner.core.config import RunConfig
    from runner.run.records import ResultRecord, TranscriptRecord
    from runner.run.store import RunStore
    from validation.instance import Instance

    store = RunStore(runs / "ep")
    store.open(RunConfig(run_id="ep", model="oracle", epochs=2), {})
    instance = Instance.model_validate({"meta_info": {"case_id": "a-01", "bench_subset": "Foundational Analysis"},
                                        "agent_input": {"data_path": "x.edf", "instruction": "x"},
                                        "eval_config": {"metrics": []}})
    for epoch, key, score in ((1, "a-01", 0.0), (2, "a-01@2", 100.0)):
        store.begin_instance(key, "codeact")
        transcript = TranscriptRecord(case_id="a-01", epoch=epoch, status="solution", error=f"marker-{epoch}")
        store.write_instance(key, instance, transcript, "", [], None)
        store.append_result(ResultRecord(case_id="a-01", epoch=epoch, task_id="a", bench_subset="s",
                                         status="solution", score=score, rounds=1, prompt_tokens=0,
                                         completion_tokens=0, duration_s=0.1))


def test_epochs_below_one_name_the_option(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EEGBENCH_RUNS", str(tmp_path))
    assert cli.main(["eval", "--model", "oracle", "--epochs", "0"]) == cli.EXIT_USER_ERROR
    assert "epochs must be at least 1" in " ".join(capsys.readouterr().err.split())


def test_logs_shows_an_epoch_column_and_filters_by_epoch(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EEGBENCH_RUNS", str(tmp_path))
    epoch_run(tmp_path)
    assert cli.main(["logs", "ep"]) == 0
    out = capsys.readouterr().out
    assert "┃ epoch" in out and out.count("a-01") == 2
    assert cli.main(["logs", "ep", "--epoch", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("a-01") == 1 and "100.0" in out


def test_show_reads_one_epoch_by_case_at_k_or_option(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EEGBENCH_RUNS", str(tmp_path))
    epoch_run(tmp_path)
    for argv, marker in ((["a-01"], "marker-1"), (["a-01@2"], "marker-2"), (["a-01", "--epoch", "2"], "marker-2"),
                         (["a-01@2", "--epoch", "2"], "marker-2")):
        assert cli.main(["show", "ep", *argv]) == 0
        assert marker in capsys.readouterr().out, argv
    assert cli.main(["show", "ep", "a-01@2", "--epoch", "3"]) == cli.EXIT_USER_ERROR
    assert "--epoch 3 names another epoch" in capsys.readouterr().err
    assert cli.main(["show", "ep", "a-01@5"]) == cli.EXIT_USER_ERROR
    assert "no instance 'a-01@5'" in capsys.readouterr().err


def test_rich_markup_in_an_error_is_shown_literally(tmp_path, monkeypatch, capsys):
    import json
    import shutil

    from runner.core.paths import Environment

    monkeypatch.setenv("EEGBENCH_RUNS", str(tmp_path / "runs"))
    cases = tmp_path / "[bold]cases"
    cases.mkdir()
    source = Environment.from_os().paths.instances_dir / "foundational_analysis" / "fa_hjorth-01.json"
    doc = json.loads(source.read_text())
    doc["meta_info"]["bench_subset"] = "[red]Sleep[/red] [link=http://x]Assessment[/link]"
    (cases / "case.json").write_text(json.dumps(doc))
    shutil.copy(source, cases / "fine.json")
    assert cli.main(["eval", "--model", "null", "--cases", str(cases)]) == cli.EXIT_USER_ERROR
    err = " ".join(capsys.readouterr().err.split())
    assert "[bold]cases" in err and "[red]Sleep[/red] [link=http://x]Assessment[/link]" in err, err
