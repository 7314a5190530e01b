"""`make eval MODEL=oracle JOBS=2` over the whole benchmark on the local backend, and over one
instance of every task with SANDBOX=docker (same parsed results as the local kernel);
`MODEL=null` over one instance of every task; then `eegbench logs`, `show` and replay on the
oracle run.

The full run is the suite's longest test: every test that reads it is in this module, which
`make test` gives to one worker whole (pytest-xdist --dist loadfile) and starts first."""
import json

import pytest

from tests.integration.conftest import Eval, assert_no_leftover

# The full run takes minutes, longer on a loaded machine than the per-test 900 s.
pytestmark = pytest.mark.timeout(3600)
FULL_RUN_TIMEOUT_S = 3000


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory):
    """`eegbench eval --model oracle --jobs 2` over every instance on the local backend."""
    ev = Eval(tmp_path_factory.mktemp("oracle") / "runs")
    proc = ev("eval", "--model", "oracle", "--jobs", "2", "--run", "oracle", "--sandbox", "local",
              timeout=FULL_RUN_TIMEOUT_S)
    assert_no_leftover(ev)
    return ev, proc


@pytest.fixture(scope="module")
def docker_run(tmp_path_factory, one_case_per_task):
    ev = Eval(tmp_path_factory.mktemp("oracle-docker") / "runs")
    proc = ev("eval", "--model", "oracle", "--jobs", "2", "--run", "oracle", "--sandbox", "docker",
              "--set", ",".join(one_case_per_task), timeout=FULL_RUN_TIMEOUT_S)
    assert_no_leftover(ev)
    return ev, proc


def parsed_results(ev: Eval, run: str) -> dict[str, dict]:
    """case id -> the fields the parser read from the oracle's report."""
    return {
        path.parent.name: json.loads(path.read_text())["fields"]
        for path in (ev.runs_dir / run / "instances").glob("*/score.json")
    }


@pytest.mark.docker
def test_oracle_on_docker_every_task_solution_and_score_100(docker_run, one_case_per_task):
    ev, proc = docker_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "sandbox: docker (asked for docker: docker" in proc.stderr
    results = ev.results("oracle")
    assert sorted(r["case_id"] for r in results) == one_case_per_task and len(one_case_per_task) >= 40
    bad = [(r["case_id"], r["status"], r["score"], r["error"]) for r in results
           if r["status"] != "solution" or r["score"] != 100.0]
    assert not bad


@pytest.mark.docker
def test_oracle_results_on_docker_equal_those_of_the_local_kernel(docker_run, oracle_run, one_case_per_task):
    local_ev, local_proc = oracle_run
    assert local_proc.returncode == 0, local_proc.stderr[-3000:]
    on_docker, on_local = parsed_results(docker_run[0], "oracle"), parsed_results(local_ev, "oracle")
    assert sorted(on_docker) == one_case_per_task
    differ = {case: (on_local.get(case), fields) for case, fields in on_docker.items() if on_local.get(case) != fields}
    assert not differ


@pytest.mark.docker
def test_run_json_records_the_backend_and_image(docker_run):
    ev, _ = docker_run
    run = json.loads((ev.runs_dir / "oracle" / "run.json").read_text())
    assert run["sandbox_backend"] == "docker" and run["config"]["sandbox"] == "docker"
    assert run["sandbox"]["image"].startswith("eegbench-kernel:")
    assert run["sandbox"]["image_id"].startswith("sha256:")


@pytest.mark.docker


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
