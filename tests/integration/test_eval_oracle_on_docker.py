"""`make eval SANDBOX=docker JOBS=2`, the first command with no MODEL and no SET: the oracle over
one instance of every task, each one a solution scoring 100, and the summary says the install
works; every deterministic value exactly the ground truth (as the local kernel gives it); the
backend, image and compile cache recorded in run.json. Docker is required: a missing daemon or
image fails these tests (run `make image`)."""
import json

import pytest

from tests.integration.conftest import Eval, assert_no_leftover, ground_truth_mismatches

pytestmark = pytest.mark.docker
RUN_TIMEOUT_S = 1800


@pytest.fixture(scope="module")
def docker_run(tmp_path_factory, one_case_per_task):
    ev = Eval(tmp_path_factory.mktemp("oracle-docker") / "runs")
    proc = ev("eval", "--jobs", "2", "--run", "oracle", "--sandbox", "docker", timeout=RUN_TIMEOUT_S)
    assert_no_leftover(ev)
    return ev, proc


def test_oracle_on_docker_every_task_solution_and_score_100(docker_run, one_case_per_task):
    ev, proc = docker_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "sandbox: docker (asked for docker: docker" in proc.stderr
    said = " ".join(proc.stderr.split())  # rich wraps long lines
    assert "No MODEL given: running the oracle as an installation check on one instance of each task" in said
    assert f"installation check: the oracle scored 100 on one instance of each of {len(one_case_per_task)} tasks" in said
    results = ev.results("oracle")
    assert sorted(r["case_id"] for r in results) == one_case_per_task and len(one_case_per_task) >= 40
    bad = [(r["case_id"], r["status"], r["score"], r["error"]) for r in results
           if r["status"] != "solution" or r["score"] != 100.0]
    assert not bad


def test_oracle_results_on_docker_equal_the_ground_truth_to_the_bit(docker_run):
    # The local kernel is held to the same (test_eval_oracle_full_benchmark.py), so the two
    # backends compute the same values.
    assert not ground_truth_mismatches(docker_run[0], "oracle")


def test_run_json_records_the_backend_and_image(docker_run):
    ev, _ = docker_run
    run = json.loads((ev.runs_dir / "oracle" / "run.json").read_text())
    assert run["sandbox_backend"] == "docker" and run["config"]["sandbox"] == "docker"
    assert run["sandbox"]["image"].startswith("eegbench-kernel:")
    assert run["sandbox"]["image_id"].startswith("sha256:")
    assert run["config"]["selection"] == ["check"] and run["config"]["model"] == "oracle"
    # make image built the kernels' compile cache for this image (tests/integration/test_kernels_load_compiled_code.py)
    assert run["jit_cache"].startswith("compile cache ") and "/jit/docker-" in run["jit_cache"]
