"""The sandbox contract, held to every backend: the same hostile cells, limits, timeouts and
teardown checks run against `local` (bubblewrap) and `docker` (the kernel image), for real.

Docker is not optional here: when the daemon does not answer or the image is not built, the
docker half FAILS (run `make image`). Backend-specific checks (cgroup files, rlimit fallback,
container settings, stale collection) live in test_local.py and test_docker.py.

Module-scoped sandboxes per backend keep the file fast: `box` for tests that leave the kernel
as they found it, `rough` for tests that kill or restart it (each checks the next cell
works), `slow` for cells that need a long timeout. Lifecycle tests start their own.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import textwrap
import time
import tracemalloc
from pathlib import Path

import pytest

from runner.sandbox import docker as docker_backend
from runner.sandbox import get_backend, kernel, local
from runner.sandbox.base import Limits, SandboxError, SandboxSpec

PROJECT_ROOT = Path(__file__).resolve().parents[3]
SECRET = "secret-123"
SANDBOX_UID = 65534
# Variables the kernel's own environment may hold: ours, plus what ipykernel and Docker set.
ALLOWED_ENV = set(local.sandbox_env(Limits())) | {
    "PWD", "TERM", "CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR", "PAGER", "GIT_PAGER",
    "PYDEVD_USE_FRAME_EVAL", "SHLVL", "_", "HOSTNAME",
}
BACKENDS = ("local", "docker")
# Per backend: the module whose kernel_command a test may replace, and its interpreter.
KERNEL_COMMAND = {
    "local": (local, lambda: local.kernel_python()),
    "docker": (docker_backend, lambda: docker_backend.KERNEL_PYTHON),
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


def run(box, code: str):
    return box.execute(textwrap.dedent(code))


def host_pids(box) -> list[int]:
    """Every process of the sandbox, as host pids (read from its pids cgroup)."""
    if isinstance(box, local.LocalSandbox):
        procs = Path(box.cgroups["pids"], "cgroup.procs")
    else:
        procs = box._pids_events.parent / "cgroup.procs"
    return [int(p) for p in procs.read_text().split()]


def leftovers(box, pids: list[int], container: str | None) -> list[str]:
    """What of a sandbox still exists on the host (empty when torn down)."""
    found = [str(box.box)] if box.box.exists() else []
    found += [f"pid {p}" for p in pids if Path(f"/proc/{p}").exists()]  # not even a zombie
    if isinstance(box, local.LocalSandbox):
        found += [p for p in box.cgroups.values() if Path(p).exists()]
    else:
        found += [f"container {c}" for c in own_containers() if container.startswith(c)]
    return found


def own_containers() -> list[str]:
    import docker

    client = docker.from_env()
    try:
        found = client.api.containers(all=True, filters={"label": f"eegbench.controller={os.getpid()}"})
    finally:
        client.close()
    return [c["Id"][:12] for c in found]


def own_boxes(backend) -> set[Path]:
    """This test process's sandbox dirs (other processes on the machine may run sandboxes)."""
    return set(backend.state_dir.glob(f"{os.getpid()}-*"))


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request):
    b = get_backend(request.param)
    ok, why = b.available()
    assert ok, why  # a missing daemon or image fails the docker half: run `make image`
    return b


def _start(backend, tmp_path_factory, name: str, **limits):
    return backend.start(make_spec(tmp_path_factory.mktemp(name), name, **limits))


@pytest.fixture(scope="module")
def box(backend, tmp_path_factory):
    os.environ["EEGBENCH_API_KEY"] = SECRET  # set before start: must not reach the kernel
    sandbox = _start(backend, tmp_path_factory, "box", memory_mb=1024, pids=128,
                     exec_timeout_s=3, grace_s=2, output_budget_chars=2000)
    yield sandbox
    sandbox.close()
    os.environ.pop("EEGBENCH_API_KEY", None)


@pytest.fixture(scope="module")
def rough(backend, tmp_path_factory):
    sandbox = _start(backend, tmp_path_factory, "rough", memory_mb=512, pids=128, exec_timeout_s=3, grace_s=1)
    sandbox.baseline_processes = len(host_pids(sandbox))
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="module")
def slow(backend, tmp_path_factory):
    # Starting pip, walking / or building 50 MB of output takes seconds on a busy machine.
    sandbox = _start(backend, tmp_path_factory, "slow", exec_timeout_s=120, output_budget_chars=2000)
    yield sandbox
    sandbox.close()


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
    assert box.alive()
    assert run(box, "print(survivor)").text == "still here\n"


@pytest.mark.parametrize("code", [
    "print('HEAD' + 'x' * 50_000_000 + 'TAIL')",  # one stream message
    "for i in range(500):\n    print(('HEAD' if i == 0 else '') + 'x' * 100_000 + ('TAIL' if i == 499 else ''), end='')",
    "'HEAD' + 'x' * 50_000_000 + 'TAIL'",  # an execute_result
])
def test_50_mb_of_output_is_truncated_without_holding_it(slow, code):
    tracemalloc.start()
    try:
        obs = run(slow, code)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert obs.status == "ok"
    assert peak < 20e6  # the controller never held the 50 MB (the kernel caps each message)
    budget = slow.spec.limits.output_budget_chars
    text = obs.text.replace("'", "")  # the execute_result is the str's repr
    assert text.startswith("HEADxxx") and text.rstrip("\n").endswith("xxxTAIL")
    assert obs.truncated_chars >= 50_000_000 - budget
    marker = f"\n[... {obs.truncated_chars} characters of output cut here (kept the first 1000 and the last 1000) ...]\n"
    assert marker in obs.text and len(obs.text) == budget + len(marker)


def test_input_fails_at_once(box):
    obs = run(box, "answer = input('name? ')")
    assert obs.status == "error" and obs.error_name == "StdinNotImplementedError"


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
                s = socket.socket(); s.settimeout(2)
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
    assert obs.status == "ok", obs.text
    assert "CONNECTED" not in obs.text and "RESOLVED" not in obs.text
    assert obs.text.count("refused") == 2 and "dns failed gaierror" in obs.text


def test_pip_install_fails(slow):
    obs = run(slow, """
    import subprocess, sys
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--retries", "0", "cowsay"],
                          capture_output=True, text=True, timeout=60)
    print("exit", done.returncode)
    import importlib.util
    print("installed", importlib.util.find_spec("cowsay") is not None)
    """)
    assert obs.status == "ok", obs.text
    assert "installed False" in obs.text and "exit 0" not in obs.text


def test_walking_the_file_system_finds_no_ground_truth_or_instance_file(slow):
    # Everything readable outside /proc, /sys and /dev: no instance file (by name or by
    # content), no reference script, nothing of the project or the data root.
    instance_names = sorted(p.name for p in (PROJECT_ROOT / "instances").rglob("*.json"))
    assert len(instance_names) > 30
    obs = run(slow, f"""
        import os
        names, suspicious, seen = set({instance_names!r}), [], 0
        for top, dirs, files in os.walk("/"):
            if top in ("/proc", "/sys", "/dev"):
                dirs[:] = []
                continue
            for name in files:
                path = os.path.join(top, name)
                seen += 1
                if name in names or "reference_scripts" in path or path.startswith({str(PROJECT_ROOT)!r}):
                    suspicious.append(path)
                elif name == "pyproject.toml" and 'name = "eegbench"' in open(path, errors="replace").read():
                    suspicious.append(path)  # the project mounted under another name
                elif name.endswith(".json") and os.path.getsize(path) < 5_000_000:
                    try:
                        text = open(path, errors="replace").read()
                    except OSError:
                        continue
                    if '"ground_truth"' in text and '"eval_config"' in text:
                        suspicious.append(path)
        print("seen", seen > 1000, "suspicious", suspicious[:20])
    """)
    assert obs.status == "ok", obs.text
    assert "seen True suspicious []" in obs.text, obs.text


def test_host_secrets_docker_socket_and_project_are_invisible(box):
    obs = run(box, f"""
        import os, socket
        for path in ["/run/docker.sock", "/var/run/docker.sock", "/work/main", "/work",
                     {str(PROJECT_ROOT / 'instances')!r}, {str(PROJECT_ROOT)!r}, "/root/.ssh",
                     "/input/not_an_input.txt", {str(box.spec.data_root)!r}]:
            print(path, os.path.exists(path))
        for path in ["/run/docker.sock", "/var/run/docker.sock"]:
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(path); print("DOCKER SOCKET REACHED", path)
            except OSError as e:
                print("no docker socket", type(e).__name__)
        try:
            open("/etc/shadow").read()
            print("SHADOW READ")
        except OSError as e:
            print("shadow", type(e).__name__)
    """)
    assert obs.status == "ok"
    assert " True" not in obs.text and "SHADOW READ" not in obs.text, obs.text
    assert obs.text.count("no docker socket") == 2 and "REACHED" not in obs.text
    assert "shadow FileNotFoundError" in obs.text or "shadow PermissionError" in obs.text


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


def test_environment_and_pid_1_show_no_secret(box):
    assert os.environ["EEGBENCH_API_KEY"] == SECRET  # set on the controller
    obs = run(box, """
        import os, json
        try:
            init = open("/proc/1/environ", "rb").read().decode(errors="replace")
        except OSError as e:
            init = "unreadable " + type(e).__name__
        print(json.dumps({"env": dict(os.environ), "init": init}))
    """)
    assert SECRET not in obs.text and "EEGBENCH_API_KEY" not in obs.text
    env = json.loads(obs.text)["env"]
    assert set(env) <= ALLOWED_ENV, set(env) - ALLOWED_ENV
    assert env["HOME"] == "/workspace" and env["MPLBACKEND"] == "Agg"
    assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == "1"


def test_kernel_runs_unprivileged_without_capabilities(box):
    obs = run(box, """
        import os
        print("uid", os.getuid(), os.geteuid(), os.getgid())
        status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines())
        for key in ["CapEff", "CapPrm", "CapBnd", "NoNewPrivs"]:
            print(key, status[key].strip())
        try:
            os.setuid(0); print("BECAME ROOT")
        except PermissionError:
            print("setuid denied")
    """)
    assert f"uid {SANDBOX_UID} {SANDBOX_UID} {SANDBOX_UID}" in obs.text
    assert "CapEff 0000000000000000" in obs.text and "CapBnd 0000000000000000" in obs.text
    assert "NoNewPrivs 1" in obs.text and "setuid denied" in obs.text


def test_root_file_system_is_read_only_but_tmp_and_shm_are_private_and_writable(box):
    marker = f"eegbench-private-{os.getpid()}"
    obs = run(box, f"""
        for d in ["/tmp", "/dev/shm"]:
            open(f"{{d}}/{marker}", "w").write("x"); print("ok", d)
        for d in ["/", "/usr", "/etc", "/opt"]:
            try:
                open(f"{{d}}/{marker}", "w").write("x"); print("WROTE", d)
            except OSError as e:
                print("denied", d)
    """)
    assert obs.text.count("ok") == 2 and obs.text.count("denied") == 4, obs.text
    assert not Path(f"/tmp/{marker}").exists() and not Path(f"/dev/shm/{marker}").exists()


def test_artifacts_reach_the_host_workspace_and_nothing_else_does(box):
    obs = run(box, "open('/workspace/file_check/result.txt', 'w').write('artifact-42')")
    assert obs.status == "ok"
    ws = Path(box.spec.workspace)
    assert (ws / "file_check" / "result.txt").read_text() == "artifact-42"
    assert sorted(p.name for p in ws.iterdir()) == ["file_check"]  # no kernel droppings


def test_two_sandboxes_cannot_see_each_other(box, rough):
    run(box, "open('/workspace/only-box.txt', 'w').write('mine')")
    obs = run(rough, f"""
        import os
        print(sorted(os.listdir('/workspace')), os.path.exists('/workspace/only-box.txt'))
        print(os.path.exists({str(box.spec.workspace)!r}))
        print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))
    """)
    assert "only-box.txt" not in obs.text and "True" not in obs.text
    pids = json.loads(obs.text.splitlines()[-1])
    assert pids[0] == 1 and len(pids) == 2, pids  # its own pid namespace: init and the kernel only
    (Path(box.spec.workspace) / "only-box.txt").unlink()


# --- cells that kill or restart the kernel (the `rough` sandbox) ---------------------------


def test_uninterruptible_cell_is_hard_killed_and_restarted(rough):
    run(rough, "lost = 1\nopen('/workspace/kept.txt', 'w').write('on disk')")
    old = rough._kernel_pid
    obs = run(rough, "sum(range(10**11))")
    assert obs.status == "timeout" and obs.restarted
    assert "did not stop within 1 s" in obs.text and "killed" in obs.text and "lost" in obs.text
    assert old and not Path(f"/proc/{old}").exists()
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


def test_memory_past_the_limit_is_reported_as_oom_once(backend, tmp_path):
    # Its own sandbox with a long timeout: on a loaded machine the kernel reclaims for
    # seconds before the OOM kill.
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        with backend.start(make_spec(tmp_path, "oom", memory_mb=512, exec_timeout_s=60)) as box:
            obs = run(box, "import numpy\nblock = numpy.ones(2 * 1024**3 // 8)\nprint('ALLOCATED')")
            assert obs.status == "oom" and obs.restarted, obs.text
            assert "memory limit (512 MB)" in obs.text and "ALLOCATED" not in obs.text
            assert bystander.poll() is None  # the controller's side is untouched
            assert run(box, "print('back')").text == "back\n"
            obs = run(box, "import os\nos._exit(3)")  # a later death is not an OOM again
            assert obs.status == "died" and "exit code 3" in obs.text
    finally:
        bystander.kill()
        bystander.wait()


def test_fork_bomb_is_contained(rough):
    obs = run(rough, "import os\nwhile True:\n    os.fork()")
    assert obs.status in ("error", "timeout")
    assert "process limit (128)" in obs.text
    assert run(rough, "print('back')").text == "back\n"
    assert len(host_pids(rough)) == rough.baseline_processes


def test_cpu_quota_throttles_the_sandbox(backend, tmp_path):
    with backend.start(make_spec(tmp_path, "cpu", cpus=0.25)) as sandbox:
        obs = run(sandbox, """
            import os, time
            before, start = os.times(), time.time()
            while time.time() - start < 1.2:
                pass
            after = os.times()
            print(round(after.user + after.system - before.user - before.system, 2))
        """)
    assert obs.status == "ok"
    assert float(obs.text) < 0.7  # a quarter of a CPU for 1.2 s, with scheduling slack


# --- lifecycle -----------------------------------------------------------------------------------


def test_close_leaves_nothing_behind_but_the_workspace(backend, tmp_path):
    sandbox = backend.start(make_spec(tmp_path, "close"))
    run(sandbox, "import subprocess\nchild = subprocess.Popen(['sleep', '600'])\n"
                 "open('/workspace/file_check/out.txt', 'w').write('kept')")
    pids = host_pids(sandbox)
    container = getattr(sandbox, "container_id", None)
    assert len(pids) >= 3 and sandbox.box.exists()
    sandbox.close()
    assert leftovers(sandbox, pids, container) == []
    assert (tmp_path / "close-ws" / "file_check" / "out.txt").read_text() == "kept"
    sandbox.close()  # idempotent
    assert sandbox.execute("print(1)").status == "infra_error"


def test_missing_input_is_an_infrastructure_error(backend, tmp_path):
    spec = make_spec(tmp_path, "missing")
    spec = SandboxSpec(**{**spec.__dict__, "inputs": ("rec/absent.edf",)})
    before = own_boxes(backend)
    with pytest.raises(SandboxError, match="case-missing.*absent.edf"):
        backend.start(spec)
    assert own_boxes(backend) == before


def test_kernel_that_never_answers_fails_start_with_its_output(backend, tmp_path, monkeypatch):
    module, python = KERNEL_COMMAND[backend.name]
    monkeypatch.setattr(kernel, "READY_TIMEOUT_S", 2.0)
    monkeypatch.setattr(module, "kernel_command", lambda conn, limits: [
        python(), "-c", "import sys, time; print('hang-marker', file=sys.stderr, flush=True); time.sleep(60)"])
    before = (own_boxes(backend), own_containers())
    started = time.monotonic()
    with pytest.raises(SandboxError, match="(?s)did not answer within 2 s.*hang-marker"):
        backend.start(make_spec(tmp_path, "hang"))
    assert time.monotonic() - started < 30  # bounded by the ready timeout, not 60 s
    assert (own_boxes(backend), own_containers()) == before  # torn down


def test_kernel_that_crashes_fails_start_at_once(backend, tmp_path, monkeypatch):
    module, python = KERNEL_COMMAND[backend.name]
    monkeypatch.setattr(module, "kernel_command", lambda conn, limits: [
        python(), "-c", "import sys; sys.exit('crash-marker')"])
    started = time.monotonic()
    with pytest.raises(SandboxError, match="(?s)exited before answering.*crash-marker"):
        backend.start(make_spec(tmp_path, "crash"))
    assert time.monotonic() - started < 20  # at once, not after the ready timeout
