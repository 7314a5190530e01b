"""`make eval MODEL=oracle SANDBOX=docker JOBS=2` over one instance of every task: each one a
solution scoring 100, with the same parsed results as the local kernel computed (the full set
runs once, on the local backend); SANDBOX=auto says which backend it took and why; the warm
pool runs and stops cleanly. Docker is required: a missing daemon or image fails these tests
(run `make image`)."""
import json
import signal

import pytest

from tests.integration.conftest import Eval, assert_no_leftover
from tests.integration.test_eval_resumes import wait_for_results

# Two runs over every instance (docker here, local in conftest) take minutes each, longer
# on a loaded machine than pytest.ini's per-test 900 s.
pytestmark = pytest.mark.timeout(3600)
FULL_RUN_TIMEOUT_S = 3000


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
def test_oracle_results_on_docker_equal_those_of_the_local_kernel(docker_run, oracle_local_run, one_case_per_task):
    local_ev, local_proc = oracle_local_run
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
def test_auto_says_which_backend_it_took_and_why(eegbench):
    proc = eegbench("eval", "--model", "oracle", "--set", "fa_alpha_relpower-01", "--run", "auto", "--sandbox", "auto")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "sandbox: docker (auto: docker is available" in proc.stderr
    run = json.loads((eegbench.runs_dir / "auto" / "run.json").read_text())
    assert run["sandbox_backend"] == "docker" and run["sandbox_choice"].startswith("auto: docker is available")
    assert [(r["status"], r["score"]) for r in eegbench.results("auto")] == [("solution", 100.0)]


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_warm_pool_run_scores_like_a_cold_one(eegbench, sandbox):
    proc = eegbench("eval", "--model", "oracle", "--set", "fa_alpha_relpower", "--jobs", "2",
                    "--sandbox", sandbox, "--warm-pool", "--run", "warm")
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = eegbench.results("warm")
    assert len(results) >= 5 and {(r["status"], r["score"]) for r in results} == {("solution", 100.0)}
    assert json.loads((eegbench.runs_dir / "warm" / "run.json").read_text())["config"]["warm_pool"] is True


@pytest.mark.docker
def test_warm_pool_interrupted_leaves_no_sandbox_behind(eegbench):
    # The `eegbench` fixture asserts afterwards that no container, process or dir is left:
    # prefetched sandboxes that never ran must be torn down too.
    proc = eegbench.popen("eval", "--model", "oracle", "--set", "sa_sleep_metrics", "--jobs", "2",
                          "--sandbox", "docker", "--warm-pool", "--run", "stopped")
    wait_for_results(eegbench, "stopped", 2, proc)
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, output[-3000:]
    finished = eegbench.results("stopped")
    assert finished and all(r["status"] == "solution" and r["score"] == 100.0 for r in finished)
