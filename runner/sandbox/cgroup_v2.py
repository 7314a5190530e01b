"""Cgroup v2 for sandboxes: find a cgroup this process may manage, set it up, and create, read,
kill and remove the sandboxes' cgroups in it.

Layout under C, the cgroup this process runs in (delegated to it by systemd, or the root of the
hierarchy as it sees it):
    C/                  hands memory, pids (and cpu) to its children (cgroup.subtree_control)
    C/leaf/             the processes that were in C: the kernel lets a non-root cgroup either
                        hold processes or hand domain controllers to children, not both
    C/eegbench/         the parent of every sandbox cgroup, weighted like one process per CPU
    C/eegbench/<name>   one sandbox: memory.max, memory.swap.max, pids.max, cpu.max

`locate` decides, without side effects, whether C is usable and says what to enable when it is
not; `prepare` makes the layout (idempotent, and safe when several processes in C run it at
once); `create` makes one sandbox's cgroup (cgroupfs.py kills and removes it). Every function
takes the hierarchy's paths as arguments, so the tests can point it at a fake tree;
`locate_self` reads the real ones. Every change to the hierarchy goes through cgroupfs.write,
mkdir and rmdir, which the tests replace with a fake kernel.
"""
from __future__ import annotations

import errno
import os
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from runner.sandbox import cgroupfs

MOUNTINFO = Path("/proc/self/mountinfo")
SELF_CGROUP = Path("/proc/self/cgroup")
SYSTEMD_DIR = Path("/run/systemd/system")  # exists while systemd is the system manager
GROUP = "eegbench"
LEAF = "leaf"
REQUIRED = ("memory", "pids")
OPTIONAL = ("cpu",)
DELEGATE_XATTRS = ("trusted.delegate", "user.delegate")  # system manager, user manager (>= 251)
CPU_PERIOD_US = 100_000
CPU_MIN_QUOTA_US = 1000  # the kernel rejects a smaller cpu.max quota
CPU_WEIGHT_MAX = 10_000  # cpu.weight's range is 1..10000
EVACUATE_ROUNDS = 10
MIB = 1024 * 1024


# -- where the hierarchy is and where this process sits in it --


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash in paths as octal escapes (\\040)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def mount_point(mountinfo_text: str) -> Path | None:
    """Where the cgroup2 file system is mounted (/sys/fs/cgroup when pure v2,
    /sys/fs/cgroup/unified on hybrid systems); None when it is not.

    Only mounts of the hierarchy's root (as this process's cgroup namespace sees it) count: under
    a bind mount of a subtree, the paths in /proc/self/cgroup would not resolve below it."""
    for line in mountinfo_text.splitlines():
        fields, sep, fs = line.partition(" - ")
        parts = fields.split(" ")
        if sep and fs.split(" ", 1)[0] == "cgroup2" and len(parts) >= 5 and parts[3] == "/":
            return Path(_unescape(parts[4]))
    return None


def own_path(proc_self_cgroup_text: str) -> str | None:
    """This process's cgroup v2 path (the '0::/path' line), None on a v1-only system."""
    for line in proc_self_cgroup_text.splitlines():
        if line.startswith("0::/"):
            return line[3:]
    return None


def _managed_path(own: str) -> str:
    """`prepare` moves the processes of C into C/leaf: a process that finds itself in a leaf
    (started there, or looking again after being moved) manages C, not the leaf."""
    head, _, tail = own.rstrip("/").rpartition("/")
    return (head or "/") if tail == LEAF else own


# -- deciding whether C is usable (no side effects) --


@dataclass(frozen=True)
class Parent:
    """Where sandbox cgroups go: found by `locate`, set up by `prepare`."""

    delegated: Path  # C, the cgroup this process manages
    group: Path  # C/eegbench, the parent of every sandbox cgroup
    controllers: tuple[str, ...]  # what sandbox cgroups get: memory, pids, and cpu when available
    cgroup: str  # C as /proc/<pid>/cgroup names it
    basis: str  # why C is ours: "delegated", "hierarchy root" or "no systemd manager"
    kernel_root: bool  # the real root, which the no-internal-process rule exempts

    def describe(self) -> str:
        """One line for the run log: where, why, and which limits apply."""
        cpu = "" if "cpu" in self.controllers else "; no cpu controller, CPU time is not limited"
        return f"cgroup v2 under {self.cgroup} ({self.basis}; {', '.join(self.controllers)}{cpu})"


def _words(path: Path) -> list[str]:
    return path.read_text().split()


def _delegated(cgroup: Path) -> bool:
    """Whether systemd marked `cgroup` as delegated (trusted.* is readable only by root)."""
    for name in DELEGATE_XATTRS:
        try:
            if os.getxattr(cgroup, name) == b"1":
                return True
        except OSError:
            continue
    return False


def _fixes(euid: int) -> str:
    if euid == 0:
        return ("run eegbench in a delegated cgroup (systemd-run --scope -p Delegate=yes <command>) "
                "or with --sandbox docker")
    return ("run eegbench in a delegated cgroup (systemd-run --user --scope -p Delegate=yes <command>), as root, "
            "or with --sandbox docker")


def _basis(cgroup: Path, own: str, systemd_dir: Path, scope_asked: bool = False) -> str | None:
    if _delegated(cgroup):
        return "delegated"
    if scope_asked and own.endswith(".scope"):  # systemd before 251 marks no delegation
        return "delegated (a scope this process asked systemd for)"
    if own == "/":  # the machine's root as root, or a container's cgroup namespace root
        return "hierarchy root"
    if not systemd_dir.is_dir():
        return "no systemd manager"
    return None


def _missing_reason(mount: Path, cgroup: Path, missing: list[str], euid: int) -> str:
    names = " and ".join(missing) + (" controllers" if len(missing) > 1 else " controller")
    real_root = not (mount / "cgroup.type").exists()  # only the real root lacks cgroup.type
    try:
        offered = set(_words(mount / "cgroup.controllers"))
    except OSError:
        offered = set(missing)  # unknown: then the delegation is what to check
    if real_root and not set(missing) <= offered:
        return (f"cgroup v2 at {mount} does not offer the {names}: bound to cgroup v1 hierarchies "
                "(a hybrid setup) or disabled on the kernel command line")
    how = ("systemd-run -p Delegate=yes delegates every controller its slice has" if euid == 0 else
           "systemd: Delegate=memory pids cpu in user@.service, e.g. a drop-in "
           "/etc/systemd/system/user@.service.d/delegate.conf")
    return f"cgroup v2: {cgroup} lacks the {names}; the delegation must include them ({how})"


def locate(mount: Path, own: str, euid: int, systemd_dir: Path = SYSTEMD_DIR, scope_asked: bool = False) -> Parent | str:
    """Where this process's sandbox cgroups go, or one line saying why not here and what to
    enable. No side effects.

    C (mount/own) is usable when it is ours (systemd's delegation xattr on it, or the root of
    the hierarchy as we see it, or no systemd manages the hierarchy), we can write it, it is a
    domain cgroup, and memory and pids are in its cgroup.controllers (cpu is optional).
    `scope_asked`: this process was started in a scope it asked systemd to delegate
    (`scope_command`), which a systemd older than 251 does not mark."""
    own = _managed_path(own)
    cgroup = mount / own.strip("/")
    if not cgroup.is_dir():
        return f"cgroup v2: {cgroup} (this process's cgroup) does not exist"
    basis = _basis(cgroup, own, systemd_dir, scope_asked)
    if basis is None:
        return (f"cgroup v2: {own} is not delegated to this process (systemd manages the hierarchy and "
                f"{cgroup} carries no user.delegate or trusted.delegate xattr): {_fixes(euid)}")
    for path in (cgroup, cgroup / "cgroup.procs", cgroup / "cgroup.subtree_control"):
        if not os.access(path, os.W_OK):
            return f"cgroup v2: cannot write {path}: {_fixes(euid)}"
    try:
        kind = (cgroup / "cgroup.type").read_text().strip() if (cgroup / "cgroup.type").exists() else "domain"
        available = _words(cgroup / "cgroup.controllers")
    except OSError as exc:
        return f"cgroup v2: cannot read {exc.filename}: {exc.strerror}"
    if kind != "domain":
        return f"cgroup v2: {cgroup} is a '{kind}' cgroup; memory and pids limits need a 'domain' one: {_fixes(euid)}"
    missing = [c for c in REQUIRED if c not in available]
    if missing:
        return _missing_reason(mount, cgroup, missing, euid)
    return Parent(
        delegated=cgroup,
        group=cgroup / GROUP,
        controllers=REQUIRED + tuple(c for c in OPTIONAL if c in available),
        cgroup=own,
        basis=basis,
        kernel_root=not (cgroup / "cgroup.type").exists(),
    )


def locate_self(euid: int | None = None, systemd_dir: Path = SYSTEMD_DIR, scope_asked: bool = False) -> Parent | str:
    """`locate` for this process, from /proc/self/mountinfo and /proc/self/cgroup."""
    try:
        mountinfo, cgroup_text = MOUNTINFO.read_text(), SELF_CGROUP.read_text()
    except OSError as exc:
        return f"cgroup v2: cannot read {exc.filename}: {exc.strerror}"
    mount = mount_point(mountinfo)
    if mount is None:
        return "cgroup v2: no cgroup2 file system is mounted"
    own = own_path(cgroup_text)
    if own is None:
        return f"cgroup v2: {SELF_CGROUP} has no '0::' line (a cgroup v1 only system)"
    return locate(mount, own, os.geteuid() if euid is None else euid, systemd_dir, scope_asked)


# -- setting up C (side effects) --


def move(pid: int, dest: Path) -> bool:
    """Migrate one process into `dest`; False when it exited meanwhile (ESRCH)."""
    try:
        cgroupfs.write(dest / "cgroup.procs", pid, append=True)
    except ProcessLookupError:
        return False
    return True


def evacuate(cgroup: Path, leaf: Path, rounds: int = EVACUATE_ROUNDS) -> None:
    """Move every process of `cgroup` into `leaf` (made when missing), re-reading until none is
    left: processes may fork while they are being moved."""
    cgroupfs.mkdir(leaf, exist_ok=True)
    procs = cgroup / "cgroup.procs"
    for _ in range(rounds):
        found = [int(p) for p in _words(procs)]
        if not found:
            return
        for pid in found:
            move(pid, leaf)
    if _words(procs):
        raise OSError(errno.EBUSY, f"processes keep appearing after {rounds} rounds of moving them out", str(procs))


def enabled(cgroup: Path) -> set[str]:
    """The controllers a cgroup hands to its children."""
    return set(_words(cgroup / "cgroup.subtree_control"))


def enable(cgroup: Path, controllers: Iterable[str]) -> None:
    """Hand controllers to a cgroup's children (a no-op for those already handed)."""
    cgroupfs.write(cgroup / "cgroup.subtree_control", " ".join(f"+{c}" for c in controllers))


def _enable_in_inner(cgroup: Path, controllers: tuple[str, ...]) -> None:
    """Enable controllers in a non-root cgroup, moving its own processes into its leaf first.
    EBUSY means a process got back in (forked, or placed by another process) in between."""
    for _ in range(EVACUATE_ROUNDS):
        if set(controllers) <= enabled(cgroup):
            return  # then the kernel keeps processes out of it: nothing to move
        evacuate(cgroup, cgroup / LEAF)
        try:
            enable(cgroup, controllers)
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                raise
    raise OSError(errno.EBUSY, f"processes keep coming back; could not enable {' '.join(controllers)}",
                  str(cgroup / "cgroup.subtree_control"))


def group_cpu_weight() -> int:
    """The CPU weight of the group holding every sandbox: that of one ordinary process (100)
    per CPU, within cpu.weight's range.

    The scheduler weighs a cgroup like a single process of its parent, however many processes
    it holds: left at the default, all running sandboxes together would get no more CPU than
    one other process on the machine (cgroup_v1.group_cpu_shares is the v1 counterpart)."""
    return min(CPU_WEIGHT_MAX, 100 * (os.cpu_count() or 1))


def prepare(parent: Parent) -> None:
    """Make C's layout: its processes in C/leaf, the controllers enabled in C and C/eegbench,
    the group's CPU weight. Idempotent; several processes in C may run it at once (each step is
    a no-op when another process did it first)."""
    if parent.kernel_root:
        enable(parent.delegated, parent.controllers)
    else:
        _enable_in_inner(parent.delegated, parent.controllers)
    cgroupfs.mkdir(parent.group, exist_ok=True)
    enable(parent.group, parent.controllers)
    if "cpu" in parent.controllers:
        cgroupfs.write(parent.group / "cpu.weight", group_cpu_weight())


# -- one sandbox's cgroup --


def cpu_quota(cpus: float) -> int:
    """cpu.max's quota, in microseconds per CPU_PERIOD_US, for `cpus` CPUs."""
    return max(CPU_MIN_QUOTA_US, int(cpus * CPU_PERIOD_US))


def create(parent: Parent, name: str, memory_mb: int, pids: int, cpus: float) -> Path:
    """Make parent.group/name with the sandbox's limits; OSError (naming the file) when not
    possible, after removing what was made. An existing cgroup of that name is an error.

    memory.oom.group stays off: the kernel's OOM kill must take the process that ran out, not
    the sandbox's long-lived helper with it."""
    cgroup = parent.group / name
    cgroupfs.mkdir(cgroup)
    try:
        cgroupfs.write(cgroup / "memory.max", memory_mb * MIB)
        if (cgroup / "memory.swap.max").exists():  # absent without swap accounting
            cgroupfs.write(cgroup / "memory.swap.max", 0)  # no swapping past the memory limit
        cgroupfs.write(cgroup / "pids.max", pids)
        if "cpu" in parent.controllers:
            cgroupfs.write(cgroup / "cpu.max", f"{cpu_quota(cpus)} {CPU_PERIOD_US}")
    except OSError:
        cgroupfs.remove(cgroup, timeout_s=1.0)
        raise
    return cgroup


def oom_kills(cgroup: Path) -> int:
    """How many processes the OOM killer took in the cgroup (and below it)."""
    return cgroupfs.counter(cgroup / "memory.events", "oom_kill")


def pids_max_hits(cgroup: Path) -> int:
    """How many forks pids.max refused."""
    return cgroupfs.counter(cgroup / "pids.events", "max")


# -- getting a delegated cgroup from systemd --


def scope_command(argv: list[str], euid: int) -> list[str]:
    """The command that re-runs `argv` in a fresh systemd scope delegated to it (the user's
    manager for a user, the system manager for root)."""
    user = [] if euid == 0 else ["--user"]
    return ["systemd-run", *user, "--scope", "--quiet", "--collect", "-p", "Delegate=yes", "--", *argv]


def systemd_reachable(euid: int, environ: Mapping[str, str] | None = None,
                      systemd_dir: Path = SYSTEMD_DIR) -> bool:
    """Whether `scope_command` can work here: systemd-run on PATH, and the system manager
    running (root) or the user's manager listening on its private socket (a user)."""
    env = os.environ if environ is None else environ
    if shutil.which("systemd-run", path=env.get("PATH")) is None:
        return False
    if euid == 0:
        return systemd_dir.is_dir()
    runtime = env.get("XDG_RUNTIME_DIR")
    return bool(runtime) and Path(str(runtime), "systemd", "private").exists()
