"""SANDBOX=auto says which backend it took and why; the warm pool runs like a cold start and
stops cleanly, on both backends. Docker is required: a missing daemon or image fails these
tests (run `make image`). The oracle's run on Docker is in test_eval_oracle_on_docker.py."""
import json
import signal

import pytest

from tests.integration.test_eval_resumes import wait_for_results


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
