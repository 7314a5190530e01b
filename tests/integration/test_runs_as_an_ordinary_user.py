"""An ordinary user (not root) runs eegbench: the local backend's suite passes as that user, two
users running at once never see, collect or break each other's sandboxes, and on a cgroup v2
machine a user's delegated subtree gives each sandbox its own memory, process and CPU limits.

Creating the users takes root, as CI runs. The users run the project's code with the system
Python in a virtualenv whose packages are the project virtualenv's (hard links): the project
virtualenv's own interpreter may live where other users cannot read (pyenv under /root).

This machine's cgroups are v1 (v2 is mounted beside them, without memory, pids or cpu), so the
cgroup v2 test boots user-mode Linux (Debian's user-mode-linux: a real Linux kernel run as a
process, the host's file system as its root) with a pure cgroup v2 hierarchy, delegates a
subtree to the user the way systemd's user manager does (ownership, the user.delegate mark), and starts a
sandbox there as that user.
"""
from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from runner.sandbox import procfs
from tests.integration.conftest import PROJECT_ROOT

USERS = ("eegbench-user-a", "eegbench-user-b")
SYSTEM_PYTHON = "/usr/bin/python3"
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


@dataclass(frozen=True)
class User:
    name: str
    uid: int
    home: Path  # a directory of its own: HOME, TMPDIR stays /tmp

    def run(self, argv: list[str], env: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
        """Start `argv` as this user, in the project, with a clean environment."""
        clean = {"HOME": str(self.home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                 "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
        return subprocess.Popen(["runuser", "-u", self.name, "--", "env", "-i",
                                 *(f"{k}={v}" for k, v in clean.items()), *argv],
                                cwd=PROJECT_ROOT, text=True, **kwargs)


def _user(name: str) -> User:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
        entry = pwd.getpwnam(name)
    home = Path(f"/tmp/{name}-home")
    home.mkdir(mode=0o700, exist_ok=True)
    os.chown(home, entry.pw_uid, entry.pw_gid)
    return User(name, entry.pw_uid, home)


def _user_venv() -> Path:
    """A virtualenv of the system Python holding the project virtualenv's packages."""
    done = subprocess.run([SYSTEM_PYTHON, "-c", "import sys; print(sys.version_info[:2])"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(sys.version_info[:2]), (
        f"{SYSTEM_PYTHON} is Python {done.stdout.strip()}, the project's virtualenv {sys.version_info[:2]}: "
        "their compiled packages would not load")
    venv = PROJECT_ROOT / ".cache" / "user-venv"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", "--clear", str(venv)], check=True)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    shutil.rmtree(site)
    source = sysconfig.get_paths()["purelib"]
    if subprocess.run(["cp", "-al", source, str(site)], capture_output=True).returncode != 0:
        subprocess.run(["cp", "-a", source, str(site)], check=True)  # another file system: copy
    return venv / "bin" / "python"


@pytest.fixture(scope="module")
def users() -> Iterator[tuple[User, User, str]]:
    """Two ordinary users and the interpreter they run the project with."""
    assert os.geteuid() == 0, "this test creates two users: run it as root (CI does)"
    yield _user(USERS[0]), _user(USERS[1]), str(_user_venv())


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
    _wait_for(lambda: len(_boxes(a)) == 1, 120, busy, "sandbox of a's")
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

    # a dies mid-instance: what it leaves is a's own to collect, not b's
    os.kill(_controller(busy), signal.SIGKILL)
    busy.communicate(timeout=60)
    assert _boxes(a) == [a_box]
    b_again = _eval(b, python, runs_b, "--model", "oracle", "--run", "again", "--set", all_case_ids[0])
    out_b, _ = b_again.communicate(timeout=600)
    assert b_again.returncode == 0 and "leftover" not in out_b, out_b[-3000:]
    assert _boxes(a) == [a_box]
    a_again = _eval(a, python, runs_a, "--model", "oracle", "--run", "after", "--set", all_case_ids[0])
    out_a, _ = a_again.communicate(timeout=600)
    # the dead controller's sandbox and its run's scratch dir
    assert a_again.returncode == 0 and "collected 2 leftover sandbox(es) and workspace(s)" in out_a, out_a[-3000:]
    assert _boxes(a) == []


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


# --- cgroup v2, for real, in user-mode Linux ------------------------------------------------------

UML_KERNEL = "/usr/bin/linux.uml"  # Debian's user-mode-linux (make uml)
# The guest's pid 1: a pure cgroup v2 machine; the checks as root (in the root cgroup); then, once
# its manager delegated user-<uid> to the user, as the user. The host's /tmp, /run and /dev are
# not the guest's.
UML_INIT = """#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t tmpfs tmp /tmp; mount -t tmpfs run /run
mount -t tmpfs dev /dev
mknod -m 666 /dev/null c 1 3; mknod -m 666 /dev/zero c 1 5; mknod -m 666 /dev/full c 1 7
mknod -m 666 /dev/random c 1 8; mknod -m 666 /dev/urandom c 1 9; mknod -m 666 /dev/tty c 5 0
mkdir -p /dev/shm /dev/pts /run/systemd/system; mount -t tmpfs shm /dev/shm; mount -t devpts pts /dev/pts
mount -t cgroup2 cgroup2 /sys/fs/cgroup
cd {project} && env -i HOME=/tmp PATH=/usr/bin:/bin PYTHONDONTWRITEBYTECODE=1 {python} {check} 0 > {out}/root.log 2>&1
C=/sys/fs/cgroup/user-{uid}
mkdir $C
for f in "" /cgroup.procs /cgroup.subtree_control /cgroup.threads; do chown {uid}:{uid} $C$f; done
python3 -c "import os; os.setxattr('$C', 'user.delegate', b'1')"  # as a user manager marks it
echo $$ > $C/cgroup.procs
su -s /bin/sh {name} -c "cd {project} && env -i HOME=/tmp PATH=/usr/bin:/bin PYTHONDONTWRITEBYTECODE=1 {python} {check} 64" \\
    > {out}/user.log 2>&1
poweroff -f
"""
# The checks inside the guest (argv: the workspace bound); print one JSON line of findings.
UML_CHECK = """
import json, sys, tempfile, textwrap
from pathlib import Path
from runner.sandbox import cgroups, get_backend, kernel
from runner.sandbox.conformance import make_spec

# A quarter of an emulated CPU on a host that CI keeps busy, where every page fault is a round
# trip to the host: the kernel's restart after the OOM kill took over the default 30 s, and
# touching 512 MB before the kill over 60 s (the cells ended as infra_error and timeout, not oom).
kernel.READY_TIMEOUT_S = 300.0
EXEC_TIMEOUT_S = 300

found = {"mechanism": cgroups.limits_mechanism(), "own": Path("/proc/self/cgroup").read_text().strip()}
backend = get_backend("local")
box = backend.start(make_spec(Path(tempfile.mkdtemp()), "v2", memory_mb=512, pids=32, cpus=0.25,
                              exec_timeout_s=EXEC_TIMEOUT_S, grace_s=1, workspace_mb=int(sys.argv[1])))
run = lambda code: box.execute(textwrap.dedent(code))
cg = Path(box.cgroups["unified"])
found["enforcement"] = box.enforcement()
found["kernel"] = type(box._proc).__name__  # forked from a template wherever cgroups hold the limits
found["files"] = {f: (cg / f).read_text().strip() for f in ("memory.max", "memory.swap.max", "pids.max", "cpu.max")}
bomb = run("import os\\nwhile True:\\n    os.fork()")
found["bomb"] = [bomb.status, bomb.error_name, bomb.text[-200:], cgroups.pids_max_hits(box.cgroups)]
found["after_bomb"] = run("print('back')").text
cpu = run('''
    import os, time
    before, start = os.times(), time.time()
    while time.time() - start < 2.0:
        pass
    after = os.times()
    print(round(after.user + after.system - before.user - before.system, 2))
''')
found["cpu_s_of_2"] = cpu.text
oom = run("import numpy\\nblock = numpy.ones(1024**3 // 8)\\nprint('ALLOC' + 'ATED')")
found["oom"] = [oom.status, oom.restarted, oom.text[-200:], cgroups.oom_kills(box.cgroups)]
found["after_oom"] = run("print(open('/workspace/file_check/x', 'w').write('kept'))").text
box.close()
found["left"] = box.leftovers() + ([str(cg)] if cg.exists() else [])
harvested = box.spec.workspace / "file_check" / "x"
found["harvested"] = harvested.read_text() if harvested.exists() else sorted(map(str, box.spec.workspace.rglob("*")))
found["log"] = box.log_tail()
print(json.dumps(found))
"""


def _findings(log: Path, boot: subprocess.CompletedProcess) -> dict:
    text = log.read_text() if log.exists() else ""
    last = text.strip().splitlines()[-1] if text.strip() else ""
    assert last.startswith("{"), f"the guest's checks did not finish:\n{text[-4000:]}\n{boot.stdout[-2000:]}"
    return json.loads(last)


def _assert_limits_held(found: dict, workspace: str) -> None:
    assert found["enforcement"] == {"memory": "cgroup v2", "pids": "cgroup v2", "cpu": "cgroup v2",
                                    "workspace": workspace}, found
    assert found["kernel"] == "ForkedKernel", found
    assert found["files"] == {"memory.max": str(512 * 2**20), "memory.swap.max": "0", "pids.max": "32",
                              "cpu.max": "25000 100000"}, found
    status, error, text, hits = found["bomb"]
    assert status == "error" and error == "BlockingIOError" and "process limit (32)" in text and hits > 0, found
    assert found["after_bomb"] == "back\n"
    assert float(found["cpu_s_of_2"]) < 1.0, found  # a quarter of a CPU for 2 s, with slack
    status, restarted, text, kills = found["oom"]
    assert status == "oom" and restarted and "memory limit (512 MB)" in text and kills >= 1, found
    assert found["after_oom"] == "4\n" and found["harvested"] == "kept" and found["left"] == [], found


@pytest.mark.timeout(1800)  # two guest runs, each allowed its slow OOM cell and restart
def test_cgroup_v2_limits_hold_for_root_and_for_a_user_in_a_delegated_subtree(users):
    a, _, python = users
    assert Path(UML_KERNEL).is_file(), f"no {UML_KERNEL}: install Debian's user-mode-linux (make uml)"
    out = Path(tempfile.mkdtemp(prefix="uml-", dir=PROJECT_ROOT / ".cache"))  # the guest sees the host's files
    try:
        out.chmod(0o777)
        (out / "check.py").write_text(UML_CHECK)
        init = out / "init.sh"
        init.write_text(UML_INIT.format(uid=a.uid, name=a.name, project=PROJECT_ROOT, python=python, out=out,
                                        check=out / "check.py"))
        init.chmod(0o755)
        boot = subprocess.run([UML_KERNEL, "mem=3G", "rootfstype=hostfs", "rootflags=/", "rw", f"init={init}",
                               "con0=null,fd:1", "con=null"], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=1700)
        as_root, as_user = _findings(out / "root.log", boot), _findings(out / "user.log", boot)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    assert as_root["mechanism"] == "cgroup v2 under / (hierarchy root; memory, pids, cpu)", as_root
    _assert_limits_held(as_root, "")  # root's bounded workspace is a loop mount: unbounded here
    assert as_user["mechanism"] == f"cgroup v2 under /user-{a.uid} (delegated; memory, pids, cpu)", as_user
    assert as_user["own"] == f"0::/user-{a.uid}/leaf", as_user  # the delegated cgroup's processes, in its leaf
    _assert_limits_held(as_user, "tmpfs in the sandbox")
