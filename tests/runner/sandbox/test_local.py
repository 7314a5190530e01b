"""The local (bubblewrap) sandbox, driven for real: real bwrap, real cgroups, real ipykernel.

Two module-scoped sandboxes keep the file fast: `box` for tests that leave the kernel as
they found it, `rough` for tests that kill or restart it (each of those checks that the
next cell works). Tests about start-up and teardown start their own.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from runner.sandbox import get_backend, kernel, local
from runner.sandbox.base import Limits, SandboxError, SandboxSpec

PROJECT_ROOT = Path(__file__).resolve().parents[3]
SECRET = "secret-123"
# Variables the kernel's own environment may hold: ours, plus what ipykernel sets itself.
ALLOWED_ENV = set(local.sandbox_env(Limits())) | {
    "PWD", "TERM", "CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR", "PAGER", "GIT_PAGER",
    "PYDEVD_USE_FRAME_EVAL", "SHLVL", "_",
}


def make_spec(tmp: Path, name: str, **limits) -> SandboxSpec:
    data = tmp / f"{name}-data"
    (data / "rec").mkdir(parents=True)
    (data / "rec" / "a.edf").write_bytes(b"EDF-BYTES-" + name.encode())
    (data / "not_an_input.txt").write_text("must stay invisible")
    return SandboxSpec(
        run_id="test", case_id=f"case-{name}", data_root=data, inputs=("rec/a.edf",),
        workspace=tmp / f"{name}-ws", limits=Limits(**limits),
    )


def running(pid: int) -> bool:
    """A live process (a zombie waiting for the host's init to reap it runs nothing)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def leftovers(box: local.LocalSandbox, pids: list[int]) -> list[str]:
    """What of a sandbox still exists on the host (empty when torn down)."""
    found = [p for p in box.cgroups.values() if Path(p).exists()]
    found += [str(box.box)] if box.box.exists() else []
    found += [f"pid {p}" for p in pids if Path(f"/proc/{p}").exists()]  # not even a zombie
    return found


def own_boxes() -> set[Path]:
    """This test process's sandbox dirs (other processes on the machine may run sandboxes)."""
    return set(local.STATE_DIR.glob(f"{os.getpid()}-*"))


def sandbox_pids(box: local.LocalSandbox) -> list[int]:
    return [int(p) for p in Path(box.cgroups["pids"], "cgroup.procs").read_text().split()]


def run(box, code: str):
    return box.execute(textwrap.dedent(code))


@pytest.fixture(scope="module")
def backend():
    b = get_backend("local")
    ok, why = b.available()
    assert ok, why  # the local backend is the embedded default: it must work wherever tests run
    return b


@pytest.fixture(scope="module")
def box(backend, tmp_path_factory):
    os.environ["EEGBENCH_API_KEY"] = SECRET  # set before start: must not reach the kernel
    spec = make_spec(tmp_path_factory.mktemp("box"), "box", memory_mb=1024, pids=128,
                     exec_timeout_s=3, grace_s=2, output_budget_chars=2000)
    sandbox = backend.start(spec)
    yield sandbox
    sandbox.close()
    os.environ.pop("EEGBENCH_API_KEY", None)


@pytest.fixture(scope="module")
def rough(backend, tmp_path_factory):
    spec = make_spec(tmp_path_factory.mktemp("rough"), "rough", memory_mb=512, pids=128,
                     exec_timeout_s=3, grace_s=1)
    sandbox = backend.start(spec)
    yield sandbox
    sandbox.close()


def test_backend_registry(backend):
    assert backend.name == "local" and "cgroup v1" in backend.available()[1]
    with pytest.raises(SandboxError, match="unknown sandbox backend 'nope'"):
        get_backend("nope")


# --- the execute contract ---------------------------------------------------------------------


def test_state_is_kept_across_cells(box):
    assert run(box, "kept = 6 * 7").status == "ok"
    obs = run(box, "print(kept)")
    assert (obs.status, obs.text) == ("ok", "42\n")


def test_empty_output_gives_an_explicit_success_message(box):
    obs = run(box, "unused = 1")
    assert obs.status == "ok" and obs.text == kernel.NO_OUTPUT


def test_stdout_stderr_and_result_are_merged(box):
    obs = run(box, """
        import sys
        print("to-stdout")
        print("to-stderr", file=sys.stderr)
        3 * 7
    """)
    assert obs.status == "ok"
    assert "to-stdout" in obs.text and "to-stderr" in obs.text and obs.text.endswith("21\n")


def test_exception_gives_traceback_and_error_fields(box):
    obs = run(box, "def f():\n    return 1 / 0\nf()")
    assert obs.status == "error"
    assert (obs.error_name, obs.error_value) == ("ZeroDivisionError", "division by zero")
    assert "Traceback" in obs.text and "return 1 / 0" in obs.text
    assert "\x1b" not in obs.text  # ANSI colours stripped
    assert run(box, "print('after')").text == "after\n"  # the next cell is not dropped


def test_timeout_interrupts_and_keeps_state(box):
    run(box, "survivor = 'still here'")
    obs = run(box, "print('before the loop', flush=True)\nwhile True:\n    pass")
    assert obs.status == "timeout" and not obs.restarted
    assert obs.text.startswith("before the loop\n")
    assert "timed out after 3 s" in obs.text and "interrupted" in obs.text
    assert 3 <= obs.duration_s < 3 + 2 + 10  # timeout + grace, with room for a loaded machine
    assert box.alive()
    assert run(box, "print(survivor)").text == "still here\n"


@pytest.mark.parametrize("code", [
    "print('HEAD' + 'x' * 50_000_000 + 'TAIL')",  # one stream message
    "for i in range(500):\n    print(('HEAD' if i == 0 else '') + 'x' * 100_000 + ('TAIL' if i == 499 else ''), end='')",
    "'HEAD' + 'x' * 50_000_000 + 'TAIL'",  # an execute_result
])
def test_50_mb_of_output_is_truncated_without_holding_it(box, code):
    tracemalloc.start()
    try:
        obs = run(box, code)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert obs.status == "ok"
    assert peak < 20e6  # the controller never held the 50 MB (the kernel caps each message)
    budget = box.spec.limits.output_budget_chars
    text = obs.text.replace("'", "")  # the execute_result is the str's repr
    assert text.startswith("HEADxxx") and text.rstrip("\n").endswith("xxxTAIL")
    assert obs.truncated_chars >= 50_000_000 - budget
    marker = f"\n[... {obs.truncated_chars} characters of output cut here (kept the first 1000 and the last 1000) ...]\n"
    assert marker in obs.text and len(obs.text) == budget + len(marker)


def test_input_fails_at_once(box):
    obs = run(box, "answer = input('name? ')")
    assert obs.status == "error" and obs.error_name == "StdinNotImplementedError"
    assert obs.duration_s < 5


# --- isolation --------------------------------------------------------------------------------


def test_no_network_outside_loopback_or_dns(box):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        obs = run(box, f"""
            import socket
            for target in [("1.1.1.1", 53), ("127.0.0.1", {port})]:
                s = socket.socket(); s.settimeout(3)
                try:
                    s.connect(target); print("CONNECTED", target)
                except OSError as e:
                    print("refused", target, type(e).__name__)
            try:
                print("RESOLVED", socket.getaddrinfo("pypi.org", 443))
            except OSError as e:
                print("dns failed", type(e).__name__)
        """)
    finally:
        listener.close()
    assert obs.status == "ok"
    assert "CONNECTED" not in obs.text and "RESOLVED" not in obs.text
    assert obs.text.count("refused") == 2 and "dns failed gaierror" in obs.text


def test_pip_install_fails(backend, tmp_path):
    # Its own sandbox with a longer timeout: starting pip alone takes seconds on a busy machine.
    with backend.start(make_spec(tmp_path, "pip", exec_timeout_s=60)) as box:
        obs = run(box, """
        import subprocess, sys
        done = subprocess.run([sys.executable, "-m", "pip", "install", "--retries", "0", "cowsay"],
                              capture_output=True, text=True, timeout=60)
        print("exit", done.returncode)
        import importlib.util
        print("installed", importlib.util.find_spec("cowsay") is not None)
        """)
    assert obs.status == "ok"
    assert "installed False" in obs.text and "exit 0" not in obs.text


def test_host_secrets_and_project_are_invisible(box):
    obs = run(box, f"""
        import os
        for path in ["/etc/shadow", "/run/docker.sock", "/run", "/work/main", "/work",
                     {str(PROJECT_ROOT / 'instances')!r}, {str(PROJECT_ROOT)!r}, "/root/.ssh",
                     "/input/not_an_input.txt", {str(box.spec.data_root)!r}]:
            print(path, os.path.exists(path))
        try:
            open("/etc/shadow").read()
            print("SHADOW READ")
        except OSError as e:
            print("shadow", type(e).__name__)
    """)
    assert obs.status == "ok"
    assert " True" not in obs.text and "SHADOW READ" not in obs.text, obs.text
    assert "shadow FileNotFoundError" in obs.text


def test_input_is_read_only_and_holds_only_the_spec_inputs(box):
    obs = run(box, """
        import os
        print(sorted(os.listdir("/input")), sorted(os.listdir("/input/rec")))
        print(open("/input/rec/a.edf", "rb").read())
        for path in ["/input/new.txt", "/input/rec/new.txt", "/input/rec/a.edf"]:
            try:
                open(path, "ab").write(b"x"); print("WROTE", path)
            except OSError as e:
                print("denied", path, type(e).__name__)
    """)
    assert obs.status == "ok"
    assert "['rec'] ['a.edf']" in obs.text and "b'EDF-BYTES-box'" in obs.text
    assert "WROTE" not in obs.text and obs.text.count("denied") == 3


def test_environment_is_empty_but_for_the_sandbox_variables(box):
    obs = run(box, "import os, json; print(json.dumps(dict(os.environ)))")
    env = json.loads(obs.text)
    assert SECRET not in obs.text
    assert set(env) <= ALLOWED_ENV, set(env) - ALLOWED_ENV
    assert env["HOME"] == "/workspace" and env["MPLBACKEND"] == "Agg"
    assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == "1"


def test_kernel_runs_unprivileged_without_capabilities(box):
    obs = run(box, """
        import os
        print("uid", os.getuid(), os.geteuid(), os.getgid(), os.getgroups())
        status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines())
        for key in ["CapEff", "CapPrm", "CapBnd", "NoNewPrivs"]:
            print(key, status[key].strip())
        try:
            os.setuid(0); print("BECAME ROOT")
        except PermissionError:
            print("setuid denied")
    """)
    assert f"uid {local.SANDBOX_UID} {local.SANDBOX_UID} {local.SANDBOX_UID} []" in obs.text
    assert "CapEff 0000000000000000" in obs.text and "CapBnd 0000000000000000" in obs.text
    assert "NoNewPrivs 1" in obs.text and "setuid denied" in obs.text


def test_tmp_and_shm_are_private_and_writable(box):
    marker = f"eegbench-private-{os.getpid()}"
    obs = run(box, f"""
        for d in ["/tmp", "/dev/shm"]:
            open(f"{{d}}/{marker}", "w").write("x"); print("ok", d)
    """)
    assert obs.text.count("ok") == 2
    assert not Path(f"/tmp/{marker}").exists() and not Path(f"/dev/shm/{marker}").exists()


def test_artifacts_reach_the_host_workspace_and_nothing_else_does(box):
    obs = run(box, "open('/workspace/file_check/result.txt', 'w').write('artifact-42')")
    assert obs.status == "ok"
    ws = Path(box.spec.workspace)
    assert (ws / "file_check" / "result.txt").read_text() == "artifact-42"
    assert sorted(p.name for p in ws.iterdir()) == ["file_check"]  # no kernel droppings


def test_two_sandboxes_cannot_see_each_other(box, rough):
    run(box, "open('/workspace/only-box.txt', 'w').write('mine')")
    obs = run(rough, """
        import os
        print(sorted(os.listdir('/workspace')), os.path.exists('/workspace/only-box.txt'))
        print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))
    """)
    assert "only-box.txt" not in obs.text and "False" in obs.text
    assert "[1, 2" in obs.text  # its own namespace: bwrap's init and the kernel first
    (Path(box.spec.workspace) / "only-box.txt").unlink()


def test_limits_are_set_in_cgroups(box):
    assert box.limits_via == "cgroups"
    memory = Path(box.cgroups["memory"], "memory.limit_in_bytes").read_text()
    assert int(memory) == 1024 * 1024 * 1024
    assert Path(box.cgroups["pids"], "pids.max").read_text().strip() == "128"
    assert Path(box.cgroups["cpu"], "cpu.cfs_quota_us").read_text().strip() == "100000"
    assert len(sandbox_pids(box)) == 4  # reaper, outer bwrap, namespace init, kernel


# --- cells that kill or restart the kernel (the `rough` sandbox) ---------------------------


def test_uninterruptible_cell_is_hard_killed_and_restarted(rough):
    run(rough, "lost = 1\nopen('/workspace/kept.txt', 'w').write('on disk')")
    old = rough._kernel_pid
    obs = run(rough, "sum(range(10**11))")
    assert obs.status == "timeout" and obs.restarted
    assert "did not stop within 1 s" in obs.text and "killed" in obs.text and "lost" in obs.text
    assert not Path(f"/proc/{old}").exists()
    assert run(rough, "print('back')").text == "back\n"
    assert run(rough, "lost").error_name == "NameError"
    assert run(rough, "print(open('/workspace/kept.txt').read())").text == "on disk\n"


def test_os_exit_is_reported_as_death_and_restarted(rough):
    obs = run(rough, "import os\nos._exit(1)")
    assert obs.status == "died" and obs.restarted
    assert "died" in obs.text and "exit code 1" in obs.text
    assert run(rough, "print('back')").text == "back\n"


def test_kill_signal_is_reported_as_death(rough):
    obs = run(rough, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    assert obs.status == "died" and obs.restarted and "killed by SIGKILL" in obs.text
    assert run(rough, "print('back')").text == "back\n"


def test_memory_past_the_limit_is_reported_as_oom(rough):
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        obs = run(rough, "import numpy\nblock = numpy.ones(2 * 1024**3 // 8)\nprint('ALLOCATED')")
        assert obs.status == "oom" and obs.restarted
        assert "memory limit (512 MB)" in obs.text and "ALLOCATED" not in obs.text
        assert bystander.poll() is None  # the controller's side is untouched
    finally:
        bystander.kill()
        bystander.wait()
    assert run(rough, "print('back')").text == "back\n"


def test_fork_bomb_is_contained(rough):
    obs = run(rough, "import os\nwhile True:\n    os.fork()")
    assert obs.status in ("error", "timeout")
    assert "process limit (128)" in obs.text
    after = run(rough, "print('back')")
    assert after.text == "back\n"
    assert len(sandbox_pids(rough)) == 4


def test_cpu_quota_throttles_the_sandbox(backend, tmp_path):
    sandbox = backend.start(make_spec(tmp_path, "cpu", cpus=0.25))
    try:
        obs = run(sandbox, """
            import os, time
            before, start = os.times(), time.time()
            while time.time() - start < 1.2:
                pass
            after = os.times()
            print(round(after.user + after.system - before.user - before.system, 2))
        """)
    finally:
        sandbox.close()
    assert obs.status == "ok"
    assert float(obs.text) < 0.7  # a quarter of a CPU for 1.2 s, with scheduling slack


def test_rlimits_stand_in_when_cgroups_are_not_writable(backend, tmp_path, monkeypatch):
    def read_only(name, limits):
        raise PermissionError("read-only cgroup file system (simulated)")

    monkeypatch.setattr(local, "create_cgroups", read_only)
    # pids: RLIMIT_NPROC counts every task of the sandbox uid, the other sandboxes' too.
    sandbox = backend.start(make_spec(tmp_path, "rlimit", memory_mb=1024, pids=128, exec_timeout_s=10))
    try:
        assert sandbox.limits_via.startswith("rlimits") and sandbox.cgroups == {}
        obs = run(sandbox, "import numpy\nblock = numpy.ones(2 * 1024**3 // 8)")
        assert obs.status == "oom" and obs.error_name == "MemoryError" and not obs.restarted
        obs = run(sandbox, "import os\nwhile True:\n    os.fork()")
        assert obs.status == "error" and obs.error_name == "BlockingIOError"
        assert "process limit (128)" in obs.text
        assert run(sandbox, "print('back')").text == "back\n"
        pids = [sandbox._proc.pid, *local._descendants(sandbox._proc.pid)]
        assert len(pids) == 4
    finally:
        sandbox.close()
    assert not any(running(p) for p in pids)


# --- lifecycle -----------------------------------------------------------------------------------


def test_sandbox_outlives_the_thread_that_started_it(backend, tmp_path):
    # --die-with-parent follows the thread that forked bwrap: worker threads come and go.
    started: list = []
    worker = threading.Thread(target=lambda: started.append(backend.start(make_spec(tmp_path, "thread"))))
    worker.start()
    worker.join()
    sandbox = started[0]
    try:
        time.sleep(0.2)
        assert sandbox.alive() and run(sandbox, "print('alive')").text == "alive\n"
        with ThreadPoolExecutor(1) as pool:  # a later cell may come from another thread
            assert pool.submit(run, sandbox, "print('other thread')").result().text == "other thread\n"
    finally:
        sandbox.close()


def test_close_leaves_no_process_cgroup_or_socket_dir(backend, tmp_path):
    sandbox = backend.start(make_spec(tmp_path, "close"))
    run(sandbox, "import subprocess\nchild = subprocess.Popen(['sleep', '600'])")
    pids = sandbox_pids(sandbox)
    assert len(pids) == 5 and sandbox.box.exists()
    sandbox.close()
    assert leftovers(sandbox, pids) == []
    sandbox.close()  # idempotent
    obs = sandbox.execute("print(1)")
    assert obs.status == "infra_error"


def test_missing_input_is_an_infrastructure_error(backend, tmp_path):
    spec = make_spec(tmp_path, "missing")
    spec = SandboxSpec(**{**spec.__dict__, "inputs": ("rec/absent.edf",)})
    with pytest.raises(SandboxError, match="case-missing.*absent.edf"):
        backend.start(spec)


def test_kernel_that_never_answers_fails_start_with_its_output(backend, tmp_path, monkeypatch):
    monkeypatch.setattr(kernel, "READY_TIMEOUT_S", 2.0)
    monkeypatch.setattr(local, "kernel_command", lambda conn, limits: [
        local.kernel_python(), "-c", "import sys, time; print('hang-marker', file=sys.stderr, flush=True); time.sleep(60)"])
    before = own_boxes()
    started = time.monotonic()
    with pytest.raises(SandboxError, match="(?s)did not answer within 2 s.*hang-marker"):
        backend.start(make_spec(tmp_path, "hang"))
    assert time.monotonic() - started < 30  # bounded by the ready timeout, not 60 s
    assert own_boxes() == before  # torn down


def test_kernel_that_crashes_fails_start_at_once(backend, tmp_path, monkeypatch):
    monkeypatch.setattr(local, "kernel_command", lambda conn, limits: [
        local.kernel_python(), "-c", "import sys; sys.exit('crash-marker')"])
    started = time.monotonic()
    with pytest.raises(SandboxError, match="(?s)exited before answering.*crash-marker"):
        backend.start(make_spec(tmp_path, "crash"))
    assert time.monotonic() - started < 20  # at once, not after the ready timeout


STARTER = """
import json, sys
from pathlib import Path
from runner.sandbox import get_backend
from runner.sandbox.base import SandboxSpec
root = Path(sys.argv[1])
(root / "data").mkdir()
box = get_backend("local").start(SandboxSpec(run_id="t", case_id="orphan", data_root=root / "data",
                                             inputs=(), workspace=root / "ws"))
print(json.dumps({"box": str(box.box), "cgroups": box.cgroups,
                  "pids": [int(p) for p in Path(box.cgroups["pids"], "cgroup.procs").read_text().split()]}),
      flush=True)
import time; time.sleep(600)
"""


def test_collect_stale_removes_what_a_killed_controller_left(backend, box, tmp_path):
    child = subprocess.Popen([sys.executable, "-c", STARTER, str(tmp_path)], stdout=subprocess.PIPE,
                             text=True, cwd=PROJECT_ROOT)
    try:
        made = json.loads(child.stdout.readline())
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert Path(made["box"]).exists() and all(Path(p).exists() for p in made["cgroups"].values())
    assert backend.collect_stale() >= 1
    assert not Path(made["box"]).exists()
    assert not any(Path(p).exists() for p in made["cgroups"].values())
    # Its processes died with it (--die-with-parent); the host's init reaps the zombies.
    assert not any(running(p) for p in made["pids"])
    assert box.box.exists() and box.execute("print(1)").text == "1\n"  # a live one is left alone
