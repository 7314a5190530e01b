"""Kernels forked from a template (local backend), driven for real: a forked kernel is the
cold kernel's equal in everything the model can observe but its imports, draws its own random
numbers, outlives a template that dies, and ends when its controller stops reading it; a
template that cannot start means cold kernels, never a failed instance."""
from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from runner.sandbox import local, procfs, template
from runner.sandbox.conformance import make_spec

pytestmark = pytest.mark.integration

# What the model can observe of its own process, besides the modules it finds imported.
PROBE = r'''
import json, os, random, resource, socket, sys, threading
import numpy
status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\t" in line)
def kind(fd):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "gone"
    return target.split(":")[0] if ":" in target else target
print("PROBE", json.dumps({
    "environ": dict(os.environ), "path": sys.path, "argv": sys.argv, "executable": sys.executable,
    "prefix": sys.prefix, "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), os.getgroups()],
    "status": {k: status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
                                               "NoNewPrivs", "Seccomp", "SigBlk", "SigIgn")},
    "rlimits": {n: resource.getrlimit(getattr(resource, n)) for n in dir(resource) if n.startswith("RLIMIT_")},
    "cwd": os.getcwd(), "umask": os.umask(0o022), "hostname": socket.gethostname(),
    "fds": sorted(kind(fd) for fd in os.listdir("/proc/self/fd")),
    "threads": len(os.listdir("/proc/self/task")), "cgroup": open("/proc/self/cgroup").read(),
    "ppid": os.getppid(), "pid_is_small": os.getpid() < 100,
    "oom_score_adj": open("/proc/self/oom_score_adj").read().strip(),
    "numpy": numpy.random.random(), "random": random.random(),
    "workspace": sorted(os.listdir("/workspace")), "inputs": sorted(os.listdir("/input/rec")),
}))
'''


ZMQ = Counter({"socket": 10**6, "anon_inode": 10**6})


def _targets(pid: int) -> set[str]:
    """What a host process's descriptors point at (pipes and sockets by inode), /dev/null aside."""
    found = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            found.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue
    return found - {"/dev/null"}


def probe(box) -> dict:
    obs = box.execute(textwrap.dedent(PROBE))
    assert obs.status == "ok", obs.text
    line = next(line for line in obs.text.splitlines() if line.startswith("PROBE "))
    return json.loads(line[len("PROBE "):])


@pytest.fixture(scope="module")
def backends():
    forked, cold = local.LocalBackend(), local.LocalBackend()
    cold.fork_kernels = False
    for backend in (forked, cold):
        ok, why = backend.available()
        assert ok, why
    return forked, cold


def test_a_forked_kernel_sees_what_a_cold_kernel_sees(backends, tmp_path):
    forked, cold = backends
    libs = tmp_path / "libs" / "mylib"
    libs.mkdir(parents=True)
    (libs / "__init__.py").write_text("VALUE = 7\n")
    seen = {}
    for name, backend in (("forked", forked), ("cold", cold)):
        spec = replace(make_spec(tmp_path, name, memory_mb=1024, pids=128), libraries=(libs,))
        with backend.start(spec) as box:
            assert (box._proc.__class__ is template.ForkedKernel) == (name == "forked")
            seen[name] = probe(box)
            seen[name]["shared_with_a_template"] = sorted(_targets(box.kernel_pid) & set().union(
                *(_targets(t._proc.pid) for t in backend.templates._templates.values() if t._proc)))
            imported = box.execute("import mylib, sys; print(mylib.VALUE, 'yasa' in sys.modules)").text
            seen[name]["imported"] = imported.split()
    a, b = seen["forked"], seen["cold"]
    assert a["imported"] == ["7", "True"] and b["imported"] == ["7", "False"]  # the template's imports
    for key in ("environ", "path", "argv", "executable", "prefix", "ids", "status", "rlimits", "cwd", "umask",
                "hostname", "threads", "ppid", "pid_is_small", "oom_score_adj", "workspace", "inputs"):
        assert a[key] == b[key], (key, a[key], b[key])
    # Descriptors: the same kinds; as many of each but the kernel's ZeroMQ sockets and their
    # eventfds, whose number follows the client's connections; none the template holds.
    assert set(a["fds"]) == set(b["fds"]), (a["fds"], b["fds"])
    assert Counter(a["fds"]) - ZMQ == Counter(b["fds"]) - ZMQ, (a["fds"], b["fds"])
    assert a["shared_with_a_template"] == [], a["shared_with_a_template"]
    assert a["cgroup"].count("\n") == b["cgroup"].count("\n") and "eegbench" not in a["environ"].get("HOME", "")
    assert a["ids"][0] != 0 and a["status"]["CapEff"] == "0000000000000000" and a["status"]["NoNewPrivs"] == "1"


def test_kernels_forked_from_one_template_draw_different_random_numbers(backends, tmp_path):
    forked, _ = backends
    draws = []
    for i in range(3):
        with forked.start(make_spec(tmp_path, f"rng{i}")) as box:
            draws.append(probe(box))
    assert len({d["numpy"] for d in draws}) == 3 and len({d["random"] for d in draws}) == 3


def test_a_dead_template_is_replaced_and_its_kernels_live_on(backends, tmp_path, caplog):
    forked, _ = backends
    with forked.start(make_spec(tmp_path, "before")) as before:
        templates = list(forked.templates._templates.values())
        assert templates and all(t.alive() for t in templates)
        for t in templates:
            assert t._proc is not None
            os.kill(t._proc.pid, signal.SIGKILL)
            t._proc.wait(timeout=10)
        assert before.execute("print(6 * 7)").text.strip() == "42"  # its kernel did not die with it
        with caplog.at_level(logging.WARNING, logger="runner.sandbox.template"):
            with forked.start(make_spec(tmp_path, "after")) as after:
                assert isinstance(after._proc, template.ForkedKernel)
                assert after.execute("print(6 * 7)").text.strip() == "42"
        assert "kernel template died; starting a new one" in caplog.text
        assert before.execute("print(7 * 7)").text.strip() == "49"


CONTROLLER = r"""
import json, sys, time
from pathlib import Path
from runner.sandbox import local
from runner.sandbox.conformance import make_spec
box = local.LocalBackend().start(make_spec(Path(sys.argv[1]), "killed"))
templates = [t._proc.pid for t in local.TEMPLATES._templates.values()]
print(json.dumps({"reaper": box._proc.pid, "kernel": box.kernel_pid, "templates": templates}), flush=True)
time.sleep(600)
"""


def test_a_killed_controller_takes_its_template_and_forked_kernels_with_it(tmp_path):
    controller = subprocess.Popen([sys.executable, "-c", CONTROLLER, str(tmp_path)], stdout=subprocess.PIPE,
                                  cwd=Path(__file__).resolve().parents[3], text=True)
    try:
        started = json.loads(controller.stdout.readline())
        pids = [started["reaper"], started["kernel"], *started["templates"]]
        assert len(pids) == 3 and all(procfs.running(p) for p in pids), started
    finally:
        controller.kill()
        controller.wait()
    deadline = time.monotonic() + 20
    while any(procfs.running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in pids if procfs.running(p)] == []


def test_a_template_that_cannot_start_means_cold_kernels(tmp_path, caplog):
    backend = local.LocalBackend()
    backend.templates = template.Templates()
    broken = template.TEMPLATE_PROGRAM
    template.TEMPLATE_PROGRAM = "import sys; sys.exit(3)"  # what a template with a broken import does
    try:
        with caplog.at_level(logging.WARNING, logger="runner.sandbox.template"):
            with backend.start(make_spec(tmp_path, "cold")) as box:
                assert not isinstance(box._proc, template.ForkedKernel)
                assert box.execute("print(6 * 7)").text.strip() == "42"
            with backend.start(make_spec(tmp_path, "again")) as box:  # said once, tried once
                assert box.execute("print(6 * 7)").text.strip() == "42"
    finally:
        template.TEMPLATE_PROGRAM = broken
    assert caplog.text.count("kernels start cold") == 1 and "did not start" in caplog.text


def test_the_env_view_holds_what_the_template_imported(backends, tmp_path):
    forked, _ = backends
    with forked.start(make_spec(tmp_path, "files")) as box:
        obs = box.execute(textwrap.dedent("""
            import os, sys, matplotlib, mne
            from matplotlib import font_manager
            paths = [m.__file__ for m in list(sys.modules.values()) if getattr(m, "__file__", None)]
            missing = [p for p in paths if not os.path.exists(p)]
            fonts = [f.fname for f in font_manager.fontManager.ttflist if not os.path.exists(f.fname)]
            print("MISSING", len(paths) > 500, missing[:5], fonts[:5])
            print(os.path.exists(matplotlib.get_data_path()), mne.channels.make_standard_montage("standard_1020").ch_names[0])
        """))
    assert obs.status == "ok", obs.text
    assert "MISSING True [] []" in obs.text and "True Fp1" in obs.text, obs.text


def test_without_cgroups_kernels_start_cold(backends, tmp_path, monkeypatch):
    """The rlimit fallback bounds memory as an address space, which a fork would start with
    the template's whole stack in: there, kernels start cold."""
    from runner.sandbox import cgroups

    def read_only(name, limits):
        raise PermissionError("read-only cgroup file system (simulated)")

    monkeypatch.setattr(cgroups, "create", read_only)
    forked, _ = backends
    with forked.start(make_spec(tmp_path, "rlimits", memory_mb=1024)) as box:
        assert box.limits_via.startswith("rlimits") and not isinstance(box._proc, template.ForkedKernel)
        assert box.execute("print(6 * 7)").text.strip() == "42"
