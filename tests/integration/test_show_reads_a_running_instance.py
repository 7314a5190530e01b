"""`eegbench show` reads an instance while it runs and after its run was stopped: turns are
streamed to the run directory as they happen, with the controller's log beside them."""
import json
import signal
import time

CASE = "fa_alpha_relpower-01"
REPLIES = {"replies": [
    "<execute>\nprint('first turn done')\n</execute>",
    "<execute>\nimport time\ntime.sleep(120)\n</execute>",
    "<solution>{}</solution>",
]}


def wait_for(predicate, proc, timeout=120):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert proc.poll() is None, proc.stdout.read()[-3000:]
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.2)


def test_show_follows_a_running_instance_and_a_stopped_one(eegbench, tmp_path):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(REPLIES))
    proc = eegbench.popen("eval", "--model", f"script:{script}", "--set", CASE, "--run", "live",
                          "--exec-timeout", "300")
    stream = eegbench.runs_dir / "live" / "instances" / CASE / "turns.jsonl"
    wait_for(lambda: stream.is_file() and len(stream.read_text().splitlines()) >= 1, proc)

    running = eegbench("show", "live", CASE)
    assert running.returncode == 0, running.stderr[-2000:]
    assert "first turn done" in running.stdout
    assert "status: running, 1 turn(s) so far" in running.stdout

    proc.send_signal(signal.SIGTERM)
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, output[-3000:]
    assert eegbench.results("live") == []  # nothing half-written is recorded
    stopped = eegbench("show", "live", CASE)
    assert "status: unfinished (its run was stopped; it reruns on resume)" in stopped.stdout
    assert "first turn done" in stopped.stdout
    log = (eegbench.runs_dir / "live" / "instances" / CASE / "controller.log").read_text()
    assert f"{CASE}: started (codeact, local)" in log and "sandbox ready after" in log
