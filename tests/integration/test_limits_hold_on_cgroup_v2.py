"""On a cgroup v2 machine, a user's delegated subtree gives each sandbox its own memory, process
and CPU limits, as root's hierarchy does, and kernels fork from a template there.

This machine's cgroups are v1 (v2 is mounted beside them, without memory, pids or cpu), so the
test boots user-mode Linux (Debian's user-mode-linux: a real Linux kernel run as a process,
the host's file system as its root) with a pure cgroup v2 hierarchy, delegates a subtree to
the user the way systemd's user manager does (ownership, the user.delegate mark), and starts a
sandbox there as root and as that user. Creating the user takes root, as CI runs.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import PROJECT_ROOT
from tests.integration.users import User, two_users


@pytest.fixture(scope="module")
def users() -> Iterator[tuple[User, User, str]]:
    yield from two_users("uml")


UML_KERNEL = "/usr/bin/linux.uml"  # Debian's user-mode-linux (make uml)
# What the guest kernel prints, then panics, when it cannot restore a process's FPU state through
# ptrace: seen on hosts whose CPU has a large XSAVE area (AMX), with Debian's UML 6.1 and 6.12
# alike. Nothing in the guest ran, so the test can prove nothing there: it reports XFAIL with the
# reason (never a pass); any other failure to boot still fails.
UML_CANNOT_RUN = "ptrace set fp regs failed"
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
        if UML_CANNOT_RUN in boot.stdout:
            pytest.xfail(f"user-mode Linux cannot run a process on this host's CPU ({UML_CANNOT_RUN!r}, then a "
                         "panic): the cgroup v2 limits are unproven on this machine")
        as_root, as_user = _findings(out / "root.log", boot), _findings(out / "user.log", boot)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    assert as_root["mechanism"] == "cgroup v2 under / (hierarchy root; memory, pids, cpu)", as_root
    _assert_limits_held(as_root, "")  # root's bounded workspace is a loop mount: unbounded here
    assert as_user["mechanism"] == f"cgroup v2 under /user-{a.uid} (delegated; memory, pids, cpu)", as_user
    assert as_user["own"] == f"0::/user-{a.uid}/leaf", as_user  # the delegated cgroup's processes, in its leaf
    _assert_limits_held(as_user, "tmpfs in the sandbox")
