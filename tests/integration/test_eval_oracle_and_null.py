"""`make eval MODEL=oracle JOBS=2` over the whole benchmark and `MODEL=null` over one instance
of every task, then `eegbench logs` and `eegbench show` on the oracle run."""
import pytest


@pytest.fixture(scope="module")
def oracle_run(oracle_local_run):
    return oracle_local_run  # session-scoped in conftest: test_eval_on_docker compares with it


def test_eval_oracle_jobs2_every_instance_solution_and_score_100(oracle_run, all_case_ids):
    ev, proc = oracle_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = ev.results("oracle")
    assert sorted(r["case_id"] for r in results) == sorted(all_case_ids)
    assert len(all_case_ids) >= 30
    bad = [(r["case_id"], r["status"], r["score"], r["error"]) for r in results
           if r["status"] != "solution" or r["score"] != 100.0]
    assert not bad


def test_eval_records_limits_and_environment_in_run_json(oracle_run):
    import json

    ev, _ = oracle_run
    run = json.loads((ev.runs_dir / "oracle" / "run.json").read_text())
    controls = run["config"]["controls"]
    assert controls["max_rounds"] == 20 and controls["exec_timeout_s"] == 150 and controls["deadline_s"] == 720
    assert controls["repeat_limit"] == 3 and controls["max_no_action"] == 3 and controls["output_budget_chars"] == 8000
    assert len(run["instance_set_hash"]) == 64 and run["libraries"]["mne"] != "not installed"


def test_logs_lists_every_instance_with_status_and_score(oracle_run, all_case_ids):
    ev, _ = oracle_run
    proc = ev("logs", "oracle")
    assert proc.returncode == 0, proc.stderr
    for case in all_case_ids:
        assert case in proc.stdout
    filtered = ev("logs", "oracle", "--status", "max_rounds")
    assert all(case not in filtered.stdout for case in all_case_ids)


def test_show_prints_code_observation_and_score(oracle_run, all_case_ids):
    ev, _ = oracle_run
    case = all_case_ids[0]
    proc = ev("show", "oracle", case)
    assert proc.returncode == 0, proc.stderr
    assert "def run(" in proc.stdout  # the oracle's code
    assert "EEGBENCH_ORACLE_RESULT" in proc.stdout  # its observation
    assert "score 100" in proc.stdout
    missing = ev("show", "oracle", "no-such-case")
    assert missing.returncode == 2 and "no-such-case" in missing.stderr


def test_eval_null_every_task_solution_and_score_0(eegbench, one_case_per_task):
    proc = eegbench("eval", "--model", "null", "--jobs", "2", "--run", "null", "--set", ",".join(one_case_per_task))
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = eegbench.results("null")
    assert sorted(r["case_id"] for r in results) == one_case_per_task
    assert {(r["status"], r["score"]) for r in results} == {("solution", 0.0)}


def test_replay_of_the_oracle_run_scores_the_same(oracle_run):
    ev, _ = oracle_run
    proc = ev("eval", "--model", f"replay:{ev.runs_dir / 'oracle'}", "--set", "fa_alpha_relpower", "--run", "replay")
    assert proc.returncode == 0, proc.stderr[-3000:]
    replayed = {r["case_id"]: (r["status"], r["score"]) for r in ev.results("replay")}
    original = {r["case_id"]: (r["status"], r["score"]) for r in ev.results("oracle") if r["case_id"] in replayed}
    assert len(replayed) >= 5 and replayed == original


def test_eval_without_model_says_so_and_runs_the_oracle(eegbench):
    proc = eegbench("eval", "--set", "fa_alpha_relpower-01", "--run", "check")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "No MODEL given" in proc.stderr
    assert [(r["status"], r["score"]) for r in eegbench.results("check")] == [("solution", 100.0)]


def test_eval_rejects_bad_options_naming_them(eegbench):
    proc = eegbench("eval", "--model", "nosuch:thing", "--set", "fa_alpha_relpower-01", "--run", "bad")
    assert proc.returncode == 2 and "nosuch:thing" in proc.stderr
    proc = eegbench("eval", "--model", "null", "--set", "no_such_task", "--run", "bad2")
    assert proc.returncode == 2 and "no_such_task" in proc.stderr
    proc = eegbench("eval", "--model", "null", "--run", "../escape")
    assert proc.returncode == 2 and "RUN=" in proc.stderr
