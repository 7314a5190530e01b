"""`make eval MODEL=oracle SANDBOX=docker JOBS=2` over one instance of every task: each one a
solution scoring 100, with the same parsed results as the local kernel gives for the same
instances, and the backend and image recorded in run.json. Docker is required: a missing
daemon or image fails these tests (run `make image`)."""
import json

import pytest

from tests.integration.conftest import Eval, assert_no_leftover

pytestmark = pytest.mark.docker
RUN_TIMEOUT_S = 1800


def oracle_per_task(tmp_path_factory, cases: list[str], sandbox: str) -> tuple[Eval, object]:
    ev = Eval(tmp_path_factory.mktemp(f"oracle-{sandbox}") / "runs")
    proc = ev("eval", "--model", "oracle", "--jobs", "2", "--run", "oracle", "--sandbox", sandbox,
              "--set", ",".join(cases), timeout=RUN_TIMEOUT_S)
    assert_no_leftover(ev)
    return ev, proc


@pytest.fixture(scope="module")
def docker_run(tmp_path_factory, one_case_per_task):
    return oracle_per_task(tmp_path_factory, one_case_per_task, "docker")


@pytest.fixture(scope="module")
def local_run(tmp_path_factory, one_case_per_task):
    return oracle_per_task(tmp_path_factory, one_case_per_task, "local")


def parsed_results(ev: Eval, run: str) -> dict[str, dict]:
    """case id -> the fields the parser read from the oracle's report."""
    return {
        path.parent.name: json.loads(path.read_text())["fields"]
        for path in (ev.runs_dir / run / "instances").glob("*/score.json")
    }


def test_oracle_on_docker_every_task_solution_and_score_100(docker_run, one_case_per_task):
    ev, proc = docker_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "sandbox: docker (asked for docker: docker" in proc.stderr
    results = ev.results("oracle")
    assert sorted(r["case_id"] for r in results) == one_case_per_task and len(one_case_per_task) >= 40
    bad = [(r["case_id"], r["status"], r["score"], r["error"]) for r in results
           if r["status"] != "solution" or r["score"] != 100.0]
    assert not bad


def test_oracle_results_on_docker_equal_those_of_the_local_kernel(docker_run, local_run, one_case_per_task):
    local_ev, local_proc = local_run
    assert local_proc.returncode == 0, local_proc.stderr[-3000:]
    on_docker, on_local = parsed_results(docker_run[0], "oracle"), parsed_results(local_ev, "oracle")
    assert sorted(on_docker) == one_case_per_task
    differ = {case: (on_local.get(case), fields) for case, fields in on_docker.items() if on_local.get(case) != fields}
    assert not differ


def test_run_json_records_the_backend_and_image(docker_run):
    ev, _ = docker_run
    run = json.loads((ev.runs_dir / "oracle" / "run.json").read_text())
    assert run["sandbox_backend"] == "docker" and run["config"]["sandbox"] == "docker"
    assert run["sandbox"]["image"].startswith("eegbench-kernel:")
    assert run["sandbox"]["image_id"].startswith("sha256:")
