"""Isolation: hostile cells that look for the network, the host, the ground truth, secrets,
privileges, writable places and the other sandboxes, and must find none of them."""
from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from runner.benchmark import numerics
from runner.core.paths import PROJECT_ROOT
from runner.sandbox.base import Limits
from runner.sandbox.conformance.context import SECRET, SECRET_VAR, Context, check, run
from runner.sandbox.layout import SANDBOX_UID, sandbox_env
from validation.unit import TRUTH_KEYS

QUOTED_TRUTH_KEYS = tuple(f'"{key}"' for key in TRUTH_KEYS)  # as they stand in an instance file

# Variables the kernel's own environment may hold: ours, plus what ipykernel and Docker set.
ALLOWED_ENV = set(sandbox_env(Limits(), "/bin/python")) | {
    "PWD", "TERM", "CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR", "PAGER", "GIT_PAGER",
    "PYDEVD_USE_FRAME_EVAL", "SHLVL", "_", "HOSTNAME",
}


@check
def no_network_outside_loopback_or_dns(ctx: Context) -> None:
    """No route out, not even to a listener on the host's loopback, and no DNS."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        obs = run(ctx.box, f"""
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
    assert "CONNECTED" not in obs.text and "RESOLVED" not in obs.text, obs.text
    assert obs.text.count("refused") == 2 and "dns failed gaierror" in obs.text, obs.text


@check
def pip_install_fails(ctx: Context) -> None:
    """No package can be installed (no network, read-only site-packages)."""
    obs = run(ctx.slow, """
    import subprocess, sys
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--retries", "0", "cowsay"],
                          capture_output=True, text=True, timeout=60)
    print("exit", done.returncode)
    import importlib.util
    print("installed", importlib.util.find_spec("cowsay") is not None)
    """)
    assert obs.status == "ok", obs.text
    assert "installed False" in obs.text and "exit 0" not in obs.text, obs.text


@check
def walking_the_file_system_finds_no_ground_truth_or_instance_file(ctx: Context) -> None:
    """Everything readable outside /proc, /sys and /dev: no instance file (by name or by
    content), no reference script, nothing of the project or the data root."""
    instance_names = sorted(p.name for p in (PROJECT_ROOT / "instances").rglob("*.json"))
    assert len(instance_names) > 30, f"too few instance files under {PROJECT_ROOT / 'instances'}"
    obs = run(ctx.slow, f"""
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
                    if any(key in text for key in {QUOTED_TRUTH_KEYS!r}) and '"eval_config"' in text:
                        suspicious.append(path)
        print("seen", seen > 1000, "suspicious", suspicious[:20])
    """)
    assert obs.status == "ok", obs.text
    assert "seen True suspicious []" in obs.text, obs.text


@check
def host_secrets_docker_socket_and_project_are_invisible(ctx: Context) -> None:
    """No Docker socket, no /etc/shadow, no project, no data root, no input but the spec's."""
    box = ctx.box
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
    assert obs.status == "ok", obs.text
    assert " True" not in obs.text and "SHADOW READ" not in obs.text, obs.text
    assert obs.text.count("no docker socket") == 2 and "REACHED" not in obs.text, obs.text
    assert "shadow FileNotFoundError" in obs.text or "shadow PermissionError" in obs.text, obs.text


@check
def input_is_read_only_and_holds_only_the_spec_inputs(ctx: Context) -> None:
    """/input has the spec's files and nothing else, and none of it can be written."""
    obs = run(ctx.box, """
        import os
        print(sorted(os.listdir("/input")), sorted(os.listdir("/input/rec")))
        print(open("/input/rec/a.edf", "rb").read())
        for path in ["/input/new.txt", "/input/rec/new.txt", "/input/rec/a.edf"]:
            try:
                open(path, "ab").write(b"x"); print("WROTE", path)
            except OSError as e:
                print("denied", path, type(e).__name__)
    """)
    assert obs.status == "ok", obs.text
    assert "['rec'] ['a.edf']" in obs.text and "b'EDF-BYTES-box'" in obs.text, obs.text
    assert "WROTE" not in obs.text and obs.text.count("denied") == 3, obs.text


@check
def environment_and_pid_1_show_no_secret(ctx: Context) -> None:
    """The controller's environment (an API key) is in neither the kernel's nor pid 1's."""
    box = ctx.box  # starts it with the secret set on the controller
    assert os.environ[SECRET_VAR] == SECRET
    obs = run(box, """
        import os, json
        try:
            init = open("/proc/1/environ", "rb").read().decode(errors="replace")
        except OSError as e:
            init = "unreadable " + type(e).__name__
        print(json.dumps({"env": dict(os.environ), "init": init}))
    """)
    assert SECRET not in obs.text and SECRET_VAR not in obs.text, obs.text
    env = json.loads(obs.text)["env"]
    assert set(env) <= ALLOWED_ENV, set(env) - ALLOWED_ENV
    assert env["HOME"] == "/workspace" and env["MPLBACKEND"] == "Agg", env
    assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == "1", env
    assert all(env.get(k) == v for k, v in numerics.pinned_env().items()), env  # ground truth's CPU paths


@check
def kernel_runs_unprivileged_without_capabilities(ctx: Context) -> None:
    """The sandbox uid, no capabilities at all, no_new_privs, setuid(0) refused."""
    obs = run(ctx.box, """
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
    assert f"uid {SANDBOX_UID} {SANDBOX_UID} {SANDBOX_UID}" in obs.text, obs.text
    assert "CapEff 0000000000000000" in obs.text and "CapBnd 0000000000000000" in obs.text, obs.text
    assert "NoNewPrivs 1" in obs.text and "setuid denied" in obs.text, obs.text


@check
def root_file_system_is_read_only_but_tmp_and_shm_are_private_and_writable(ctx: Context) -> None:
    """/tmp and /dev/shm are writable and not the host's; /, /usr, /etc, /opt are read-only."""
    marker = f"eegbench-private-{os.getpid()}"
    obs = run(ctx.box, f"""
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


@check
def artifacts_reach_the_host_workspace_and_nothing_else_does(ctx: Context) -> None:
    """A file written to /workspace/file_check/ is in the host workspace once the sandbox is
    closed (a tmpfs workspace is copied out then); the kernel leaves nothing else in /workspace."""
    with ctx.start("artifacts") as box:
        obs = run(box, "open('/workspace/file_check/result.txt', 'w').write('artifact-42')\n"
                       "import os; print(sorted(os.listdir('/workspace')))")
    assert obs.status == "ok" and obs.text == "['file_check']\n", obs.text  # no kernel droppings
    ws = Path(box.spec.workspace)
    assert (ws / "file_check" / "result.txt").read_text() == "artifact-42"
    found = sorted(p.name for p in ws.iterdir())
    assert found == ["file_check"], found


@check
def two_sandboxes_cannot_see_each_other(ctx: Context) -> None:
    """Another sandbox's workspace and processes are invisible: own pid namespace, own files."""
    box, rough = ctx.box, ctx.rough
    run(box, "open('/workspace/only-box.txt', 'w').write('mine')")
    obs = run(rough, f"""
        import os
        print(sorted(os.listdir('/workspace')), os.path.exists('/workspace/only-box.txt'))
        print(os.path.exists({str(box.spec.workspace)!r}))
        print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))
    """)
    assert "only-box.txt" not in obs.text and "True" not in obs.text, obs.text
    pids = json.loads(obs.text.splitlines()[-1])
    assert pids[0] == 1 and len(pids) == 2, pids  # its own pid namespace: init and the kernel only
    assert run(box, "import os\nos.remove('/workspace/only-box.txt')").status == "ok"
