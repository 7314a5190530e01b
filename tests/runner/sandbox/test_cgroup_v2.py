"""runner/sandbox/cgroup_v2.py on a fake cgroup2 tree in tmp_path, and (integration, as root,
where a cgroup2 hierarchy is writable) on the real kernel.

The fake tree holds the interface files a kernel shows. `FakeKernel` stands in for the kernel's
side (cgroupfs.write, mkdir, rmdir) and applies only rules confirmed on a real
kernel (Linux 6.18): a write to cgroup.procs migrates one process (ESRCH when it is gone, EBUSY
into a cgroup that hands controllers to its children); "+x" in cgroup.subtree_control is
ENOENT when x is not in cgroup.controllers and EBUSY while a non-root cgroup holds processes
(re-enabling is a no-op); a new child gets the files of what its parent enables; writing a
file that does not exist is ENOENT; cgroup.kill empties the cgroup; rmdir is EBUSY while the
cgroup has children or processes, and takes its interface files with it.

Fake pids are above the kernel's PID_MAX_LIMIT (2**22), so nothing can ever signal a real
process through them.
"""
from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from runner.sandbox import cgroup_v2, cgroupfs
from runner.sandbox.cgroup_v2 import Parent

FAKE_PID = 2**22 + 1000
MIB = 1024 * 1024
USER_FIX = "systemd-run --user --scope -p Delegate=yes"
ROOT_FIX = "systemd-run --scope -p Delegate=yes"

# This VM's /proc/self/mountinfo (hybrid: v1 controllers, cgroup2 at /sys/fs/cgroup/unified).
HYBRID_MOUNTINFO = """\
25 1 254:0 / / rw,relatime - ext4 /dev/vda rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
# Pure v2 (optional fields before the separator), a bind mount of a subtree first, and a
# mount point with a space and a backslash in it.
PURE_V2_MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
30 22 0:26 /user.slice /srv/sub rw shared:9 - cgroup2 cgroup2 rw
31 22 0:26 / /run/my\\040cgroups\\134x rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate
"""

CONTROLLER_FILES = {
    "memory": {"memory.max": "max", "memory.swap.max": "max",
               "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0"},
    "pids": {"pids.max": "max", "pids.events": "max 0"},
    "cpu": {"cpu.max": "max 100000", "cpu.weight": "100"},
}


def words(path: Path) -> list[str]:
    return path.read_text().split()


def populate(cgroup: Path, controllers: Iterable[str], root: bool = False, swap: bool = True) -> None:
    """The files a kernel shows in a cgroup whose parent enables `controllers` for it; files
    already there keep their content."""
    controllers = list(controllers)
    files = {"cgroup.controllers": " ".join(controllers), "cgroup.subtree_control": "", "cgroup.procs": ""}
    if not root:  # the root has neither, nor any controller's limit files
        files |= {"cgroup.type": "domain", "cgroup.kill": ""}
        for c in controllers:
            files |= {k: v for k, v in CONTROLLER_FILES.get(c, {}).items() if swap or k != "memory.swap.max"}
    (cgroup / "cgroup.controllers").write_text(files.pop("cgroup.controllers") + "\n")
    for name, text in files.items():
        if not (cgroup / name).exists():
            (cgroup / name).write_text(text + "\n" if text else "")


def mkcg(parent: Path, name: str, procs: Iterable[int] = (), control: str = "", delegate: bool = False) -> Path:
    """A child cgroup as the kernel makes it, then set up like a manager would have."""
    child = parent / name
    child.mkdir()
    populate(child, words(parent / "cgroup.subtree_control"))
    (child / "cgroup.procs").write_text("".join(f"{p}\n" for p in procs))
    (child / "cgroup.subtree_control").write_text(control)
    if delegate:
        os.setxattr(child, "user.delegate", b"1")
    return child


class FakeKernel:
    """The kernel's side of cgroup_v2 (`_write`, `_mkdir`, `_rmdir`) over a fake tree."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.writes: list[tuple[str, str]] = []  # (path relative to the root, value)
        self.gone: set[int] = set()  # pids whose process exited
        self.reject: dict[str, int] = {}  # file name -> errno of every write to it
        self.swap = True  # whether new cgroups get memory.swap.max
        self.before_enable: Callable[[Path], None] | None = None  # runs before a subtree_control write
        self.after_move: Callable[[int, Path], None] | None = None  # runs after a migration

    def _error(self, code: int, path: Path) -> OSError:
        return OSError(code, os.strerror(code), str(path))

    def write(self, path: Path, value: object, append: bool = False) -> None:
        self.writes.append((str(path.relative_to(self.root)), str(value)))
        if path.name in self.reject:
            raise self._error(self.reject[path.name], path)
        if not path.exists():
            raise self._error(errno.ENOENT, path)  # cgroupfs makes no files on write (no O_CREAT)
        handlers = {"cgroup.procs": self._migrate, "cgroup.subtree_control": self._control,
                    "cgroup.kill": self._kill}
        if path.name in handlers:
            handlers[path.name](path.parent, str(value))
        else:
            path.write_text(f"{value}\n")

    def _migrate(self, dest: Path, value: str) -> None:
        pid = int(value)
        if pid in self.gone:
            self._drop(pid)
            raise self._error(errno.ESRCH, dest / "cgroup.procs")
        if dest != self.root and words(dest / "cgroup.subtree_control"):
            raise self._error(errno.EBUSY, dest / "cgroup.procs")
        self._drop(pid)
        with open(dest / "cgroup.procs", "a") as f:
            f.write(f"{pid}\n")
        if self.after_move:
            self.after_move(pid, dest)

    def _drop(self, pid: int) -> None:
        for procs in self.root.rglob("cgroup.procs"):
            kept = [p for p in words(procs) if p != str(pid)]
            procs.write_text("".join(f"{p}\n" for p in kept))

    def _control(self, cgroup: Path, value: str) -> None:
        if self.before_enable:
            self.before_enable(cgroup)
        have = set(words(cgroup / "cgroup.subtree_control"))
        available = words(cgroup / "cgroup.controllers")
        plus = {t[1:] for t in value.split() if t.startswith("+")}
        minus = {t[1:] for t in value.split() if t.startswith("-")}
        if plus - set(available):
            raise self._error(errno.ENOENT, cgroup / "cgroup.subtree_control")
        if plus - have and cgroup != self.root and words(cgroup / "cgroup.procs"):
            raise self._error(errno.EBUSY, cgroup / "cgroup.subtree_control")  # no internal processes
        have = (have | plus) - minus
        (cgroup / "cgroup.subtree_control").write_text(" ".join(sorted(have)) + "\n")
        for child in (c for c in cgroup.iterdir() if c.is_dir()):
            populate(child, sorted(have), swap=self.swap)

    def _kill(self, cgroup: Path, value: str) -> None:
        for procs in cgroup.rglob("cgroup.procs"):
            procs.write_text("")

    def mkdir(self, path: Path, exist_ok: bool = False) -> None:
        if path.exists() and exist_ok:
            return
        path.mkdir()
        populate(path, words(path.parent / "cgroup.subtree_control"), swap=self.swap)

    def rmdir(self, path: Path) -> None:
        if not path.is_dir():
            raise self._error(errno.ENOENT, path)
        if any(c.is_dir() for c in path.iterdir()) or words(path / "cgroup.procs"):
            raise self._error(errno.EBUSY, path)
        shutil.rmtree(path)

    def wrote(self, name: str) -> list[str]:
        """Values written to files of this name, in order."""
        return [v for p, v in self.writes if Path(p).name == name]


@dataclass
class Tree:
    """A systemd-like hierarchy: a user's session scope, and a scope delegated by the user's
    manager (what `systemd-run --user --scope -p Delegate=yes` makes)."""

    root: Path
    systemd: Path  # stands in for /run/systemd/system
    session: Path
    scope: Path

    def own(self, cgroup: Path) -> str:
        return "/" + str(cgroup.relative_to(self.root))


def build_tree(tmp_path: Path, root_offers: str = "cpuset cpu io memory hugetlb pids",
               user_control: str = "cpu memory pids") -> Tree:
    root = tmp_path / "cgroup"
    root.mkdir()
    populate(root, root_offers.split(), root=True)
    (root / "cgroup.procs").write_text(f"{FAKE_PID}\n{FAKE_PID + 10}\n")
    (root / "cgroup.subtree_control").write_text(user_control)
    slice_ = mkcg(mkcg(root, "user.slice", control=user_control), "user-1000.slice", control=user_control)
    session = mkcg(slice_, "session-2.scope", procs=[FAKE_PID + 1])
    manager = mkcg(slice_, "user@1000.service", control=user_control, delegate=True)
    app = mkcg(manager, "app.slice", control=user_control)
    scope = mkcg(app, "run-r1.scope", procs=[FAKE_PID + 2, FAKE_PID + 3], delegate=True)
    systemd = tmp_path / "run-systemd-system"
    systemd.mkdir()
    return Tree(root, systemd, session, scope)


def need_xattrs(path: Path) -> None:
    try:
        os.setxattr(path, "user.delegate", b"1")
    except OSError as exc:
        pytest.skip(f"{path}'s file system takes no user xattrs: {exc}")


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    need_xattrs(tmp_path)
    return build_tree(tmp_path)


@pytest.fixture
def kernel(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> FakeKernel:
    fake = FakeKernel(tree.root)
    monkeypatch.setattr(cgroupfs, "write", fake.write)
    monkeypatch.setattr(cgroupfs, "mkdir", fake.mkdir)
    monkeypatch.setattr(cgroupfs, "rmdir", fake.rmdir)
    return fake


def located(tree: Tree, cgroup: Path, euid: int = 1000) -> Parent:
    parent = cgroup_v2.locate(tree.root, tree.own(cgroup), euid, tree.systemd)
    assert isinstance(parent, Parent), parent
    return parent


def pids(cgroup: Path) -> list[int]:
    return [int(p) for p in words(cgroup / "cgroup.procs")]


# -- mount_point, own_path --


def test_mount_point_on_a_hybrid_system() -> None:
    assert cgroup_v2.mount_point(HYBRID_MOUNTINFO) == Path("/sys/fs/cgroup/unified")


def test_mount_point_on_pure_v2_skips_subtree_mounts_and_unescapes() -> None:
    assert cgroup_v2.mount_point(PURE_V2_MOUNTINFO) == Path("/run/my cgroups\\x")
    assert cgroup_v2.mount_point("25 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n") is None


def test_mount_point_of_this_machine_is_a_cgroup2_root() -> None:
    mount = cgroup_v2.mount_point(Path("/proc/self/mountinfo").read_text())
    if mount is None:
        pytest.skip("no cgroup2 mounted here")
    assert (mount / "cgroup.controllers").is_file() and not (mount / "cgroup.type").exists()


def test_own_path() -> None:
    hybrid = "9:name=systemd:/\n4:memory:/process_api/eb92\n1:cpu:/\n0::/\n"
    assert cgroup_v2.own_path(hybrid) == "/"
    assert cgroup_v2.own_path("0::/user.slice/user-1000.slice/session-2.scope\n") == \
        "/user.slice/user-1000.slice/session-2.scope"
    assert cgroup_v2.own_path("4:memory:/x\n1:cpu:/\n") is None


# -- locate --


def test_locate_accepts_a_delegated_scope(tree: Tree) -> None:
    parent = located(tree, tree.scope)
    assert parent.delegated == tree.scope and parent.group == tree.scope / "eegbench"
    assert parent.controllers == ("memory", "pids", "cpu")
    assert parent.basis == "delegated" and not parent.kernel_root
    assert parent.describe() == (f"cgroup v2 under {tree.own(tree.scope)} (delegated; memory, pids, cpu)")


def test_locate_accepts_trusted_delegate_as_root(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    os.removexattr(tree.scope, "user.delegate")
    assert isinstance(cgroup_v2.locate(tree.root, tree.own(tree.scope), 0, tree.systemd), str)  # unmarked

    def getxattr(path: str | Path, name: str) -> bytes:
        if Path(path) == tree.scope and name == "trusted.delegate":
            return b"1"
        raise OSError(errno.ENODATA, os.strerror(errno.ENODATA), str(path))

    monkeypatch.setattr(cgroup_v2.os, "getxattr", getxattr)  # trusted.* is root's alone to set and read
    assert located(tree, tree.scope, euid=0).basis == "delegated"


def test_locate_manages_c_when_this_process_sits_in_its_leaf(tree: Tree) -> None:
    leaf = mkcg(tree.scope, "leaf", procs=[FAKE_PID + 2])
    parent = cgroup_v2.locate(tree.root, tree.own(leaf), 1000, tree.systemd)
    assert isinstance(parent, Parent) and parent.delegated == tree.scope
    assert parent.cgroup == tree.own(tree.scope)


def test_locate_accepts_the_hierarchy_root(tree: Tree) -> None:
    parent = cgroup_v2.locate(tree.root, "/", 0, tree.systemd)
    assert isinstance(parent, Parent)
    assert parent.delegated == tree.root and parent.group == tree.root / "eegbench"
    assert parent.basis == "hierarchy root" and parent.kernel_root


def test_locate_refuses_a_session_scope_with_the_fix(tree: Tree) -> None:
    own = tree.own(tree.session)
    reason = cgroup_v2.locate(tree.root, own, 1000, tree.systemd)
    assert isinstance(reason, str)
    assert own in reason and USER_FIX in reason and "--sandbox docker" in reason
    as_root = cgroup_v2.locate(tree.root, own, 0, tree.systemd)
    assert isinstance(as_root, str) and ROOT_FIX in as_root and "--user" not in as_root


def test_locate_refuses_the_user_managers_own_cgroups(tree: Tree) -> None:
    app = tree.scope.parent  # under user@1000.service, managed by it, not delegated
    reason = cgroup_v2.locate(tree.root, tree.own(app), 1000, tree.systemd)
    assert isinstance(reason, str) and "app.slice is not delegated" in reason


def test_locate_without_systemd_takes_a_writable_cgroup(tree: Tree) -> None:
    parent = cgroup_v2.locate(tree.root, tree.own(tree.session), 1000, tree.systemd / "absent")
    assert isinstance(parent, Parent)
    assert parent.delegated == tree.session and parent.basis == "no systemd manager"


def test_locate_refuses_what_it_cannot_write(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, m: real(p, m) and Path(p).name != "cgroup.subtree_control")
    reason = cgroup_v2.locate(tree.root, tree.own(tree.scope), 1000, tree.systemd)
    assert isinstance(reason, str)
    assert f"cannot write {tree.scope / 'cgroup.subtree_control'}" in reason and USER_FIX in reason


@pytest.mark.parametrize("missing", ["memory", "pids"])
def test_locate_refuses_a_delegation_without_memory_or_pids(tmp_path: Path, missing: str) -> None:
    need_xattrs(tmp_path)
    tree = build_tree(tmp_path, user_control=" ".join(c for c in ("cpu", "memory", "pids") if c != missing))
    reason = cgroup_v2.locate(tree.root, tree.own(tree.scope), 1000, tree.systemd)
    assert isinstance(reason, str)
    assert f"lacks the {missing} controller" in reason and str(tree.scope) in reason
    assert "Delegate=memory pids cpu" in reason and "/etc/systemd/system/user@.service.d/" in reason


def test_locate_blames_cgroup_v1_on_a_hybrid_root(tmp_path: Path) -> None:
    tree = build_tree(tmp_path, root_offers="hugetlb", user_control="")
    reason = cgroup_v2.locate(tree.root, "/", 0, tree.systemd)
    assert isinstance(reason, str)
    assert "memory and pids controllers" in reason and "cgroup v1" in reason and str(tree.root) in reason


def test_locate_reports_a_missing_cpu_controller_in_describe(tmp_path: Path) -> None:
    need_xattrs(tmp_path)
    tree = build_tree(tmp_path, user_control="memory pids")
    parent = located(tree, tree.scope)
    assert parent.controllers == ("memory", "pids")
    assert "(delegated; memory, pids; no cpu controller, CPU time is not limited)" in parent.describe()


def test_locate_refuses_a_threaded_cgroup(tree: Tree) -> None:
    (tree.scope / "cgroup.type").write_text("threaded\n")
    reason = cgroup_v2.locate(tree.root, tree.own(tree.scope), 1000, tree.systemd)
    assert isinstance(reason, str) and "'threaded'" in reason and str(tree.scope) in reason


def test_locate_names_a_missing_cgroup(tree: Tree) -> None:
    reason = cgroup_v2.locate(tree.root, "/gone.scope", 1000, tree.systemd)
    assert isinstance(reason, str) and str(tree.root / "gone.scope") in reason and "does not exist" in reason


# -- prepare --


def test_prepare_moves_processes_into_leaf_and_enables_controllers(tree: Tree, kernel: FakeKernel) -> None:
    parent = located(tree, tree.scope)
    cgroup_v2.prepare(parent)
    assert pids(tree.scope) == [] and pids(tree.scope / "leaf") == [FAKE_PID + 2, FAKE_PID + 3]
    assert cgroup_v2.enabled(tree.scope) == {"memory", "pids", "cpu"}
    assert cgroup_v2.enabled(parent.group) == {"memory", "pids", "cpu"}
    assert (parent.group / "cpu.weight").read_text().strip() == str(cgroup_v2.group_cpu_weight())
    assert (tree.scope / "leaf" / "memory.max").exists()  # the leaf is limited like any child


def test_prepare_is_idempotent(tree: Tree, kernel: FakeKernel) -> None:
    parent = located(tree, tree.scope)
    cgroup_v2.prepare(parent)
    kernel.writes.clear()
    cgroup_v2.prepare(parent)
    assert kernel.wrote("cgroup.procs") == []  # C already hands out controllers: nothing to move
    assert pids(tree.scope / "leaf") == [FAKE_PID + 2, FAKE_PID + 3]
    assert cgroup_v2.enabled(parent.group) == {"memory", "pids", "cpu"}


def test_prepare_moves_again_when_a_process_slips_back(tree: Tree, kernel: FakeKernel) -> None:
    slipped = []

    def fork_once(cgroup: Path) -> None:
        if cgroup == tree.scope and not slipped:
            slipped.append(FAKE_PID + 9)
            with open(cgroup / "cgroup.procs", "a") as f:
                f.write(f"{FAKE_PID + 9}\n")

    kernel.before_enable = fork_once
    cgroup_v2.prepare(located(tree, tree.scope))
    assert slipped and pids(tree.scope) == []
    assert FAKE_PID + 9 in pids(tree.scope / "leaf")
    assert kernel.wrote("cgroup.subtree_control")[:2] == ["+memory +pids +cpu"] * 2  # EBUSY, then again
    assert cgroup_v2.enabled(tree.scope) == {"memory", "pids", "cpu"}


def test_prepare_gives_up_when_processes_keep_coming(tree: Tree, kernel: FakeKernel) -> None:
    forked = iter(range(FAKE_PID + 100, FAKE_PID + 200))

    def fork_always(cgroup: Path) -> None:
        if cgroup == tree.scope:
            with open(cgroup / "cgroup.procs", "a") as f:
                f.write(f"{next(forked)}\n")

    kernel.before_enable = fork_always
    with pytest.raises(OSError) as caught:
        cgroup_v2.prepare(located(tree, tree.scope))
    assert caught.value.errno == errno.EBUSY
    assert caught.value.filename == str(tree.scope / "cgroup.subtree_control")
    assert not cgroup_v2.enabled(tree.scope)


def test_evacuate_moves_processes_forked_meanwhile(tree: Tree, kernel: FakeKernel) -> None:
    def fork_on_first_move(pid: int, dest: Path) -> None:
        if pid == FAKE_PID + 2:
            with open(tree.scope / "cgroup.procs", "a") as f:
                f.write(f"{FAKE_PID + 4}\n")

    kernel.after_move = fork_on_first_move
    cgroup_v2.evacuate(tree.scope, tree.scope / "leaf")
    assert pids(tree.scope) == []
    assert sorted(pids(tree.scope / "leaf")) == [FAKE_PID + 2, FAKE_PID + 3, FAKE_PID + 4]


def test_evacuate_skips_a_process_that_exited(tree: Tree, kernel: FakeKernel) -> None:
    kernel.gone = {FAKE_PID + 2}
    cgroup_v2.evacuate(tree.scope, tree.scope / "leaf")
    assert pids(tree.scope) == [] and pids(tree.scope / "leaf") == [FAKE_PID + 3]
    assert cgroup_v2.move(FAKE_PID + 2, tree.scope / "leaf") is False


def test_move_writes_one_pid_per_write(tmp_path: Path) -> None:
    (tmp_path / "cgroup.procs").write_text("")
    assert cgroup_v2.move(FAKE_PID + 1, tmp_path) and cgroup_v2.move(FAKE_PID + 2, tmp_path)
    assert pids(tmp_path) == [FAKE_PID + 1, FAKE_PID + 2]


def test_prepare_at_the_kernel_root_moves_nothing(tree: Tree, kernel: FakeKernel) -> None:
    parent = cgroup_v2.locate(tree.root, "/", 0, tree.systemd)
    assert isinstance(parent, Parent)
    cgroup_v2.prepare(parent)
    assert pids(tree.root) == [FAKE_PID, FAKE_PID + 10] and not (tree.root / "leaf").exists()
    assert cgroup_v2.enabled(tree.root / "eegbench") == {"memory", "pids", "cpu"}


def test_group_cpu_weight_is_one_process_per_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert cgroup_v2.group_cpu_weight() == 400
    monkeypatch.setattr(os, "cpu_count", lambda: 256)
    assert cgroup_v2.group_cpu_weight() == 10_000  # cpu.weight's maximum


# -- create --


@pytest.fixture
def prepared(tree: Tree, kernel: FakeKernel) -> Parent:
    parent = located(tree, tree.scope)
    cgroup_v2.prepare(parent)
    return parent


def test_create_writes_every_limit(prepared: Parent, kernel: FakeKernel) -> None:
    cgroup = cgroup_v2.create(prepared, "123-abc", memory_mb=512, pids=64, cpus=1.5)
    assert cgroup == prepared.group / "123-abc"
    assert (cgroup / "memory.max").read_text() == f"{512 * MIB}\n"
    assert (cgroup / "memory.swap.max").read_text() == "0\n"
    assert (cgroup / "pids.max").read_text() == "64\n"
    assert (cgroup / "cpu.max").read_text() == "150000 100000\n"
    assert kernel.wrote("memory.oom.group") == []


def test_create_floors_the_cpu_quota(prepared: Parent) -> None:
    cgroup = cgroup_v2.create(prepared, "123-abc", memory_mb=128, pids=16, cpus=0.001)
    assert (cgroup / "cpu.max").read_text() == "1000 100000\n"


def test_create_without_cpu_or_swap_accounting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_xattrs(tmp_path)
    tree = build_tree(tmp_path, user_control="memory pids")
    kernel = FakeKernel(tree.root)
    kernel.swap = False
    for name in ("write", "mkdir", "rmdir"):
        monkeypatch.setattr(cgroupfs, name, getattr(kernel, name))
    parent = located(tree, tree.scope)
    cgroup_v2.prepare(parent)
    cgroup = cgroup_v2.create(parent, "123-abc", memory_mb=256, pids=32, cpus=2)
    assert (cgroup / "memory.max").read_text() == f"{256 * MIB}\n"
    assert not (cgroup / "memory.swap.max").exists() and not (cgroup / "cpu.max").exists()
    assert kernel.wrote("memory.swap.max") == [] and kernel.wrote("cpu.max") == []
    assert kernel.wrote("cpu.weight") == []


def test_create_refuses_an_existing_name(prepared: Parent) -> None:
    first = cgroup_v2.create(prepared, "123-abc", memory_mb=512, pids=64, cpus=1)
    with pytest.raises(FileExistsError):
        cgroup_v2.create(prepared, "123-abc", memory_mb=128, pids=16, cpus=1)
    assert (first / "memory.max").read_text() == f"{512 * MIB}\n"


def test_create_removes_what_it_made_when_a_write_fails(prepared: Parent, kernel: FakeKernel) -> None:
    kernel.reject["pids.max"] = errno.EINVAL
    with pytest.raises(OSError) as caught:
        cgroup_v2.create(prepared, "123-abc", memory_mb=512, pids=64, cpus=1)
    assert caught.value.filename == str(prepared.group / "123-abc" / "pids.max")
    assert not (prepared.group / "123-abc").exists() and prepared.group.is_dir()


# -- counters, kill, remove --


def test_counters(tmp_path: Path) -> None:
    (tmp_path / "memory.events").write_text("low 0\nhigh 0\nmax 9\noom 4\noom_kill 3\noom_group_kill 7\n")
    (tmp_path / "pids.events").write_text("max 7\n")
    assert cgroup_v2.oom_kills(tmp_path) == 3 and cgroup_v2.pids_max_hits(tmp_path) == 7
    assert cgroup_v2.oom_kills(tmp_path / "gone") == 0 and cgroup_v2.pids_max_hits(tmp_path / "gone") == 0


def test_kill_writes_cgroup_kill(prepared: Parent, kernel: FakeKernel) -> None:
    cgroup = cgroup_v2.create(prepared, "1-a", memory_mb=128, pids=16, cpus=1)
    (cgroup / "cgroup.procs").write_text(f"{FAKE_PID + 50}\n")
    cgroupfs.kill(cgroup, timeout_s=1.0)
    assert kernel.wrote("cgroup.kill") == ["1"] and pids(cgroup) == []


def test_kill_without_cgroup_kill_signals_each_process(tmp_path: Path) -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        (tmp_path / "cgroup.procs").write_text(f"{child.pid}\n")  # an old kernel's cgroup
        cgroupfs.kill(tmp_path, timeout_s=0.2)
        assert child.wait(timeout=5) == -signal.SIGKILL
        assert not (tmp_path / "cgroup.kill").exists()
    finally:
        child.kill()
        child.wait()


def test_remove_kills_and_removes(prepared: Parent, kernel: FakeKernel) -> None:
    cgroup = cgroup_v2.create(prepared, "1-a", memory_mb=128, pids=16, cpus=1)
    (cgroup / "cgroup.procs").write_text(f"{FAKE_PID + 50}\n")
    assert cgroupfs.remove(cgroup) is True
    assert not cgroup.exists() and kernel.wrote("cgroup.kill") == ["1"]
    assert cgroupfs.remove(cgroup) is True  # already gone


def test_remove_gives_up_on_a_busy_cgroup_after_the_timeout(prepared: Parent, kernel: FakeKernel) -> None:
    cgroup = cgroup_v2.create(prepared, "1-a", memory_mb=128, pids=16, cpus=1)
    kernel.mkdir(cgroup / "nested")  # a child keeps rmdir at EBUSY
    start = time.monotonic()
    assert cgroupfs.remove(cgroup, timeout_s=0.3) is False
    assert time.monotonic() - start >= 0.3 and cgroup.is_dir()


def test_remove_does_not_retry_other_errors(tmp_path: Path) -> None:
    (tmp_path / "cg").mkdir()
    (tmp_path / "cg" / "stray").write_text("")  # ENOTEMPTY: retrying cannot help
    start = time.monotonic()
    assert cgroupfs.remove(tmp_path / "cg", timeout_s=5.0) is False
    assert time.monotonic() - start < 1.0


# -- systemd scopes --


def test_scope_command() -> None:
    assert cgroup_v2.scope_command(["eegbench", "eval", "--run", "r1"], euid=1000) == [
        "systemd-run", "--user", "--scope", "--quiet", "--collect", "-p", "Delegate=yes", "--",
        "eegbench", "eval", "--run", "r1"]
    assert cgroup_v2.scope_command(["eegbench"], euid=0) == [
        "systemd-run", "--scope", "--quiet", "--collect", "-p", "Delegate=yes", "--", "eegbench"]


def test_systemd_reachable(tmp_path: Path) -> None:
    bin_dir, runtime, systemd = tmp_path / "bin", tmp_path / "run-user-1000", tmp_path / "systemd-system"
    bin_dir.mkdir()
    (bin_dir / "systemd-run").write_text("#!/bin/sh\n")
    (bin_dir / "systemd-run").chmod(0o755)
    (runtime / "systemd").mkdir(parents=True)
    env = {"PATH": str(bin_dir), "XDG_RUNTIME_DIR": str(runtime)}
    assert not cgroup_v2.systemd_reachable(1000, env, systemd)  # no user manager socket
    (runtime / "systemd" / "private").write_text("")
    assert cgroup_v2.systemd_reachable(1000, env, systemd)
    assert not cgroup_v2.systemd_reachable(1000, {"PATH": str(bin_dir)}, systemd)
    assert not cgroup_v2.systemd_reachable(1000, env | {"PATH": str(tmp_path)}, systemd)
    assert not cgroup_v2.systemd_reachable(0, env, systemd)  # no system manager
    systemd.mkdir()
    assert cgroup_v2.systemd_reachable(0, env, systemd)


# -- the real kernel (root, a writable cgroup2 hierarchy; only scratch cgroups are touched) --


def _real_mount() -> Path | None:
    mount = cgroup_v2.mount_point(Path("/proc/self/mountinfo").read_text())
    if mount is None or os.geteuid() != 0 or not os.access(mount / "cgroup.procs", os.W_OK):
        return None
    return mount


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A scratch cgroup right below the hierarchy's root, removed with everything in it."""
    mount = _real_mount()
    if mount is None:
        pytest.skip("needs root and a writable cgroup2 hierarchy")
    cgroup = mount / f"eegbench-v2-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    cgroup.mkdir()
    try:
        yield cgroup
    finally:
        for path in sorted((p for p in cgroup.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            cgroupfs.remove(path)
        cgroupfs.remove(cgroup)


@pytest.mark.integration
def test_real_kernel_migration_leaf_kill_and_removal(scratch: Path) -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        assert (scratch / "cgroup.type").read_text().strip() == "domain"
        assert cgroup_v2.move(child.pid, scratch)
        assert f"0::/{scratch.name}" in Path(f"/proc/{child.pid}/cgroup").read_text().splitlines()
        cgroup_v2.evacuate(scratch, scratch / "leaf")
        assert cgroupfs.members(scratch) == [] and cgroupfs.members(scratch / "leaf") == [child.pid]
        done = subprocess.Popen(["true"])
        done.wait()
        assert cgroup_v2.move(done.pid, scratch / "leaf") is False  # ESRCH
        assert cgroupfs.remove(scratch / "leaf") is True  # cgroup.kill, then rmdir
        assert child.wait(timeout=5) == -signal.SIGKILL and not (scratch / "leaf").exists()
    finally:
        child.kill()
        child.wait()


@pytest.mark.integration
def test_real_kernel_locate_reads_delegation_and_controllers(scratch: Path) -> None:
    os.setxattr(scratch, "user.delegate", b"1")  # cgroupfs takes user xattrs (Linux >= 5.7)
    mount = scratch.parent
    found = cgroup_v2.locate(mount, f"/{scratch.name}/leaf", 0, Path("/run/systemd/system"))
    offered = words(scratch / "cgroup.controllers")
    if {"memory", "pids"} <= set(offered):
        assert isinstance(found, Parent) and found.delegated == scratch and found.basis == "delegated"
    else:  # e.g. a hybrid system, where memory and pids belong to cgroup v1
        assert isinstance(found, str) and "memory and pids controllers" in found, found


@pytest.mark.integration
def test_real_kernel_create_fails_cleanly_without_controllers(scratch: Path) -> None:
    group = scratch / "eegbench"
    group.mkdir()  # hands no controller to its children: they have no memory.max
    parent = Parent(delegated=scratch, group=group, controllers=("memory", "pids"), cgroup=f"/{scratch.name}",
                    basis="delegated", kernel_root=False)
    with pytest.raises(FileNotFoundError) as caught:  # cgroupfs makes no files
        cgroup_v2.create(parent, "1-a", memory_mb=128, pids=16, cpus=1)
    assert caught.value.filename == str(group / "1-a" / "memory.max")
    assert not (group / "1-a").exists()
