"""A run killed half way resumes: SIGKILL then rerun, and Ctrl-C/SIGTERM stop cleanly."""
import signal
import time

import pytest

from runner.benchmark import catalog

SET = "sa_sleep_metrics"  # fast oracle instances on the yasa hypnograms


def wait_for_results(ev, run, count, proc, timeout=300):
    deadline = time.monotonic() + timeout
    while len(ev.results(run)) < count:
        assert proc.poll() is None, proc.stdout.read()[-3000:]
        assert time.monotonic() < deadline, "run made no progress"
        time.sleep(0.2)


def scores(results):
    return {r["case_id"]: (r["status"], r["score"]) for r in results}


def test_rerun_after_sigkill_holds_each_instance_once_with_clean_scores(eegbench):
    cases = [i.case_id for i in catalog.select(catalog.load_all(), [SET])]
    proc = eegbench.popen("eval", "--model", "oracle", "--set", SET, "--run", "killed")
    wait_for_results(eegbench, "killed", 3, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = eegbench.results("killed")
    assert 3 <= len(partial) < len(cases)
    rerun = eegbench("eval", "--model", "oracle", "--set", SET, "--run", "killed")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "resuming killed" in rerun.stderr
    results = eegbench.results("killed")
    ids = [r["case_id"] for r in results]
    assert len(ids) == len(set(ids))
    assert scores(results) == {case: ("solution", 100.0) for case in cases}  # as an uninterrupted run


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_stops_cleanly_and_keeps_finished_instances(eegbench, signum):
    proc = eegbench.popen("eval", "--model", "oracle", "--set", SET, "--run", "stopped", "--jobs", "2")
    wait_for_results(eegbench, "stopped", 2, proc)
    proc.send_signal(signum)
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, output[-3000:]
    assert "RUN=stopped" in output
    finished = eegbench.results("stopped")
    assert all(r["status"] == "solution" and r["score"] == 100.0 for r in finished)
    ids = [r["case_id"] for r in finished]
    assert len(ids) == len(set(ids))
    # every recorded instance has its complete audit directory
    for case in ids:
        audit = eegbench.runs_dir / "stopped" / "instances" / case
        assert (audit / "transcript.json").exists() and (audit / "score.json").exists()
