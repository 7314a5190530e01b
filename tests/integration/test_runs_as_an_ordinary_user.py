"""An ordinary user (not root) runs eegbench: the local backend's suite passes as that user, and
two users running at once never see, collect or break each other's sandboxes (the users:
tests/integration/users.py; cgroup v2 limits for a user: test_limits_hold_on_cgroup_v2.py).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.sandbox import procfs
from tests.integration.users import User, two_users
from validation.worker_lifetime import CONTROLLER_ENV

# The local backend's promises, checked again as a user: the conformance suite (isolation,
# limits, timeouts, teardown), hostile cells through `eegbench eval`, the workspace bound,
# per-sandbox process budgets, deadlines and the chaos test.
USER_TIER = [
    "tests/runner/sandbox/test_conformance.py",
    "tests/integration/test_eval_contains_hostile_code.py",
    "tests/integration/test_eval_bounds_the_workspace.py",
    "tests/integration/test_eval_isolates_concurrent_process_budgets.py",
    "tests/integration/test_eval_deadline_bounds_executions.py",
    "tests/integration/test_eval_survives_chaos.py",
]


@pytest.fixture(scope="module")
def users() -> Iterator[tuple[User, User, str]]:
    """Two ordinary users and the interpreter they run the project with."""
    yield from two_users("suite")


def test_the_local_backends_suite_passes_as_an_ordinary_user(users):
    user, _, python = users
    proc = user.run([python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-ra", "-m", "not docker",
                     "-k", "not docker", *USER_TIER], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out, _ = proc.communicate(timeout=2400)
    assert proc.returncode == 0, out[-6000:]
    assert " passed" in out and " skipped" not in out and " deselected" in out, out[-2000:]


# --- two users at once --------------------------------------------------------------------------

BUSY_REPLIES = ["<execute>\nimport time\ntime.sleep(60)\n</execute>", "<solution>{}</solution>"]


def _runs_dir(user: User, tmp: Path) -> Path:
    runs = tmp / f"runs-{user.name}"
    runs.mkdir(mode=0o700)
    os.chown(runs, user.uid, user.uid)
    return runs


def _eval(user: User, python: str, runs: Path, *args: str) -> subprocess.Popen:
    return user.run([python, "-m", "runner.cli", "eval", *args], env={"EEGBENCH_RUNS": str(runs)},
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _controller(proc: subprocess.Popen) -> int:
    """The eegbench process runuser started (runuser stays as its parent)."""
    for pid in procfs.descendants(proc.pid):
        if b"runner.cli" in Path(f"/proc/{pid}/cmdline").read_bytes():
            return pid
    raise AssertionError(f"no eegbench process under runuser {proc.pid}")


def _boxes(user: User) -> list[Path]:
    state = Path("/tmp") / f"eegbench-{user.uid}" / "sbx"
    return sorted(state.iterdir()) if state.is_dir() else []


def _wait_for(condition, seconds: float, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"no {what}: {proc.communicate()[0][-3000:]}")
        time.sleep(0.2)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A directory both users can reach (pytest's own is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="eegbench-two-users-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_two_users_at_once_keep_to_their_own_sandboxes(users, shared_tmp, all_case_ids):
    a, b, python = users
    tmp_path = shared_tmp
    replies = tmp_path / "busy.json"
    replies.write_text(json.dumps({"replies": BUSY_REPLIES}))
    replies.chmod(0o644)
    runs_a, runs_b = _runs_dir(a, tmp_path), _runs_dir(b, tmp_path)
    for box in _boxes(a) + _boxes(b):  # leftovers of an earlier session of this test
        shutil.rmtree(box, ignore_errors=True)

    # a's instance keeps its sandbox busy; b runs (and collects stale sandboxes) meanwhile
    busy = _eval(a, python, runs_a, "--model", f"script:{replies}", "--run", "busy", "--set", all_case_ids[0])
    # the state dir appears before the backend writes owner.json into it (atomically)
    _wait_for(lambda: len(_boxes(a)) == 1 and (_boxes(a)[0] / "owner.json").is_file(), 120, busy,
              "sandbox of a's with its owner record")
    [a_box] = _boxes(a)
    owner = json.loads((a_box / "owner.json").read_text())
    b_run = _eval(b, python, runs_b, "--model", "oracle", "--run", "oracle", "--jobs", "2",
                  "--set", ",".join(all_case_ids[:2]))
    out_b, _ = b_run.communicate(timeout=600)
    assert b_run.returncode == 0, out_b[-3000:]
    scores = [json.loads(line)["score"] for line in (runs_b / "oracle" / "results.jsonl").read_text().splitlines()]
    assert scores == [100.0, 100.0], out_b[-3000:]
    # The user's venv has no compile cache built for it: the run says so once, and its kernels
    # compile for themselves (runner/sandbox/jit_cache.py).
    assert " ".join(out_b.split()).count("no compile cache for local on this CPU (not built)") == 1, out_b[-3000:]
    assert a_box.exists() and all(Path(f"/proc/{pid}").exists() for pid, _ in owner["processes"]), (
        "b's run touched a's sandbox")

    # a dies mid-instance, and an older controller of a's left a worker running (what a
    # controller before the workers watched it left): both are a's own to collect, not b's
    os.kill(_controller(busy), signal.SIGKILL)
    busy.communicate(timeout=60)
    assert _boxes(a) == [a_box]
    orphan = _orphan(a)
    b_again = _eval(b, python, runs_b, "--model", "oracle", "--run", "again", "--set", all_case_ids[0])
    out_b, _ = b_again.communicate(timeout=600)
    assert b_again.returncode == 0 and "leftover" not in out_b and "ended" not in out_b, out_b[-3000:]
    assert _boxes(a) == [a_box] and orphan.poll() is None
    a_again = _eval(a, python, runs_a, "--model", "oracle", "--run", "after", "--set", all_case_ids[0])
    out_a, _ = a_again.communicate(timeout=600)
    # the dead controller's sandbox and its run's scratch dir
    assert a_again.returncode == 0 and "collected 2 leftover sandbox(es) and workspace(s)" in out_a, out_a[-3000:]
    assert "ended 1 process(es) that crashed runs left running" in out_a, out_a[-3000:]
    assert _boxes(a) == []
    assert orphan.wait(timeout=10) != 0  # runuser reports its child's SIGKILL


def _orphan(user: User) -> subprocess.Popen:
    """A process of the user's that inherited the mark of a controller that has exited."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    return user.run(["sleep", "600"], env={CONTROLLER_ENV: f"{gone.pid}:1"})


def _rejected(user: User, python: str, argv: list[str], env: dict[str, str]) -> str:
    """Run an eegbench command as the user; assert exit 2 and one error line, no traceback."""
    proc = user.run([python, "-m", "runner.cli", *argv], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 2 and "Traceback" not in out, out[-3000:]
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, out[-3000:]
    return errors[0]


def test_an_ordinary_user_is_told_what_to_fix(users, shared_tmp, all_case_ids):
    """Someone else's runs directory, recordings cache or eegbench directory: one line naming
    the directory, whose it is and the fix, and exit 2."""
    a, b, python = users
    theirs = shared_tmp / "root-owned"
    theirs.mkdir(mode=0o755)
    runs = _runs_dir(a, shared_tmp)
    error = _rejected(a, python, ["eval", "--model", "oracle", "--set", all_case_ids[0]],
                      {"EEGBENCH_RUNS": str(theirs / "runs")})
    assert error == (f"error: EEGBENCH_RUNS={theirs}/runs: {theirs} is not writable by uid {a.uid} (it belongs to "
                     "uid 0): set EEGBENCH_RUNS to a directory of yours, or make it writable"), error
    error = _rejected(a, python, ["data"], {"EEGBENCH_DATA": str(theirs / "data")})
    assert error.startswith(f"error: EEGBENCH_DATA={theirs}/data: {theirs} is not writable by uid {a.uid}"), error
    planted = Path("/tmp") / f"eegbench-{a.uid}"
    shutil.rmtree(planted, ignore_errors=True)
    planted.mkdir(mode=0o700)
    os.chown(planted, b.uid, b.uid)  # b got there first
    try:
        error = _rejected(a, python, ["eval", "--model", "oracle", "--set", all_case_ids[0], "--sandbox", "local"],
                          {"EEGBENCH_RUNS": str(runs)})
        assert error.startswith(f"error: {planted} is owned by uid {b.uid}, but it must be a private directory of "
                                f"uid {a.uid}: remove it"), error
    finally:
        shutil.rmtree(planted, ignore_errors=True)


