"""The `local` backend: one ipykernel per instance inside bubblewrap, no Docker needed.

Isolation (issue 2 part 4, DESIGN.md "Sandbox"): new pid/net/ipc/uts/cgroup namespaces,
nothing of the host file system but /usr, the Python installation and a few generated /etc
files; /input read-only with only the instance's files; /workspace writable; private /tmp and
/dev/shm; an unprivileged uid without capabilities; an empty environment; memory, pids and
CPU limits through cgroup v1 (rlimits when cgroups are not writable).

Process tree of one sandbox (host view):
    controller ─ reaper ─ bwrap (outer) ─ bwrap (pid 1 of the namespace) ─ ipykernel
(the reaper joins the cgroups and reaps orphans: see REAPER).
Killing the namespace's pid 1 makes the kernel kill everything in the namespace, which is
what hard_kill relies on; the cgroup sweep afterwards catches anything that escaped.

On-disk state, one directory per sandbox under STATE_DIR (kept short: the kernel's unix
socket paths must stay under 107 bytes):
    <STATE_DIR>/<controller pid>-<hex>/owner.json   who owns it, its cgroups and processes
                                      /etc/         generated passwd, group, hosts
                                      /sock/        bind-mounted at /kernel: sockets + kernel.json
"""
from __future__ import annotations

import concurrent.futures
import json
import math
import os
import queue
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path, PurePosixPath

from jupyter_client.blocking.client import BlockingKernelClient

from runner.sandbox import kernel
from runner.sandbox.base import (
    LIBRARY_ROOT,
    Backend,
    Limits,
    Sandbox,
    SandboxError,
    SandboxSpec,
    input_mounts,
    library_mounts,
)
from runner.transcript import Observation

# Short on purpose (socket paths < 107 bytes); one per user, since it must be private.
STATE_DIR = Path("/tmp/eegbench-sbx" if os.geteuid() == 0 else f"/tmp/eegbench-sbx-{os.geteuid()}")
CGROUP_MOUNT = Path("/sys/fs/cgroup")
CGROUP_GROUP = "eegbench"
CGROUP_CONTROLLERS = ("memory", "pids", "cpu")
SANDBOX_UID = 65534  # "nobody" on Debian: owns nothing on the host
INSIDE_SOCKET_DIR = "/kernel"
VENV_INSIDE = "/opt/venv"  # where a virtualenv running the controller appears in the sandbox
CLOSE_WAIT_S = 1.0  # ipykernel sometimes hangs on shutdown: wait this long, then kill
STALE_UNOWNED_S = 60.0  # a sandbox dir without owner.json older than this is garbage
# The first process of every sandbox (run with `python -I -S -c`). It joins the cgroups
# before anything else runs, so every sandbox process is born inside the limits, or sets
# rlimits when there are no cgroups; it dies with the controller; and it is a child
# subreaper: bwrap's outer process can exit before reaping the namespace's init (whose exit
# status it gets through a pipe), and that orphan must not become a zombie of the host's
# pid 1. It exits with bwrap's status once every descendant has been reaped.
REAPER = r"""
import ctypes, json, os, resource, signal, sys
cfg, argv = json.loads(sys.argv[1]), sys.argv[2:]
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
if os.getppid() != cfg["parent"]:
    sys.exit(112)  # the controller died while we started
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
for path in cfg["cgroup_procs"]:
    with open(path, "w") as f:
        f.write(str(os.getpid()))
for name, value in cfg["rlimits"].items():
    resource.setrlimit(getattr(resource, name), (value, value))
child = os.fork()
if child == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
status = 0
while True:
    try:
        pid, raw = os.wait()
    except ChildProcessError:
        break
    if pid == child:
        code = os.waitstatus_to_exitcode(raw)
        status = code if code >= 0 else 128 - code
sys.exit(status)
"""


# --- small process helpers ---------------------------------------------------------------


def _start_time(pid: int) -> int | None:
    """Kernel start time of a pid (field 22 of /proc/pid/stat): tells a reused pid apart."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(text.rsplit(")", 1)[1].split()[19])


def _same_process(pid: int | None, start: int | None) -> bool:
    return bool(pid) and start is not None and _start_time(pid) == start


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            text = Path(f"/proc/{pid}/task/{task}/children").read_text()
            found += [int(c) for c in text.split()]
    except OSError:
        pass
    return found


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed child stays a zombie until its parent reaps it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _ns_pid(pid: int) -> int | None:
    """The pid as seen inside the innermost pid namespace (last NSpid field)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return None


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        for child in _children(todo.pop()):
            out.append(child)
            todo.append(child)
    return out


def _kill(pid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _tasks_of_uid(uid: int) -> int:
    tasks = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid:
                tasks += len(os.listdir(f"/proc/{entry.name}/task"))
        except OSError:
            pass
    return tasks


def _wait(proc: subprocess.Popen, timeout_s: float) -> None:
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pass


def kill_strays(root: int, kernel_pid: int, client: BlockingKernelClient | None) -> int:
    """Kill every descendant of `root` (a namespace's init) but the kernel; return how many.

    Children of killed copies are re-parented to the init; repeat, since a copy not yet
    killed may fork meanwhile. The kernel's direct children become zombies it never waits
    for: have it reap them (pids as the kernel sees them). Shared by the backends whose
    sandbox processes are visible from the host (local, docker).
    """
    killed: set[int] = set()
    direct: set[int] = set()
    for _ in range(100):
        strays = [p for p in _descendants(root) if p != kernel_pid and _running(p)]
        if not strays:
            break
        direct |= {_ns_pid(p) or 0 for p in _children(kernel_pid)}
        for pid in strays:
            _kill(pid)
        killed |= set(strays)
        time.sleep(0.005)
    direct.discard(0)
    if direct and client is not None:
        kernel.reap_children(client, sorted(direct))
    return len(killed)


class _Spawner:
    """Starts every sandbox process from one long-lived thread.

    --die-with-parent is PR_SET_PDEATHSIG, which fires when the *thread* that forked the
    process exits (DESIGN.md pitfalls): a controller worker thread that finishes would take
    its sandbox down with it. This thread lives as long as the controller process.
    """

    def __init__(self) -> None:
        self._jobs: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def popen(self, argv: list[str], **kwargs) -> subprocess.Popen:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="eegbench-spawner", daemon=True)
                self._thread.start()
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._jobs.put((argv, kwargs, future))
        return future.result()

    def _loop(self) -> None:
        while True:
            argv, kwargs, future = self._jobs.get()
            try:
                future.set_result(subprocess.Popen(argv, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - hand every failure back to the caller
                future.set_exception(exc)


_SPAWNER = _Spawner()


# --- cgroups (v1) --------------------------------------------------------------------------


def _own_cgroup(controller: str) -> str:
    """This process's cgroup path in one v1 hierarchy ('/' when unknown)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return "/"
    for line in lines:
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return path
    return "/"


def cgroup_parents() -> dict[str, Path]:
    """Where this controller's sandbox cgroups go, per controller.

    Nested under the controller's own cgroup so that whatever limits or accounting the
    controller lives under also covers its sandboxes; at the hierarchy root this is
    /sys/fs/cgroup/<controller>/eegbench.
    """
    return {
        c: CGROUP_MOUNT / c / _own_cgroup(c).strip("/") / CGROUP_GROUP for c in CGROUP_CONTROLLERS
    }


def _write(path: Path, value: object) -> None:
    path.write_text(f"{value}\n")


def create_cgroups(name: str, limits: Limits) -> dict[str, str]:
    """Create and configure the sandbox's cgroups; OSError when not possible here."""
    made: dict[str, str] = {}
    try:
        for controller, parent in cgroup_parents().items():
            parent.mkdir(exist_ok=True)
            (parent / name).mkdir()
            made[controller] = str(parent / name)
        memory = Path(made["memory"])
        _write(memory / "memory.limit_in_bytes", limits.memory_mb * 1024 * 1024)
        if (memory / "memory.memsw.limit_in_bytes").exists():
            _write(memory / "memory.memsw.limit_in_bytes", limits.memory_mb * 1024 * 1024)
        _write(Path(made["pids"]) / "pids.max", limits.pids)
        cpu = Path(made["cpu"])
        _write(cpu / "cpu.cfs_period_us", 100_000)
        _write(cpu / "cpu.cfs_quota_us", max(1000, int(limits.cpus * 100_000)))
    except OSError:
        remove_cgroups(made.values())
        raise
    return made


def limits_mechanism() -> str:
    """'cgroup v1' when this controller can create sandbox cgroups, else why rlimits are used."""
    try:
        for parent in cgroup_parents().values():
            parent.mkdir(exist_ok=True)
            if not os.access(parent, os.W_OK):
                raise PermissionError(f"{parent} is not writable")
    except OSError as exc:
        return f"rlimits (cgroups not writable: {exc})"
    return "cgroup v1"


def _cgroup_pids(path: str | Path) -> list[int]:
    try:
        return [int(p) for p in Path(path, "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def kill_cgroup(path: str | Path, timeout_s: float = 3.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pids = _cgroup_pids(path)
        if not pids:
            return
        for pid in pids:
            _kill(pid)
        time.sleep(0.01)


def remove_cgroups(paths, timeout_s: float = 3.0) -> None:
    for path in paths:
        if not Path(path).is_dir():
            continue
        kill_cgroup(path, timeout_s)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                Path(path).rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:  # EBUSY while the last killed tasks are being reaped
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.02)


def _counter(path: Path, key: str) -> int:
    """A 'key N' line of a cgroup stat-like file (memory.oom_control, pids.events)."""
    try:
        for line in path.read_text().splitlines():
            k, _, v = line.partition(" ")
            if k == key:
                return int(v)
    except (OSError, ValueError):
        pass
    return 0


# --- the bubblewrap command ----------------------------------------------------------------


def sandbox_env(limits: Limits) -> dict[str, str]:
    threads = str(max(1, math.ceil(limits.cpus)))
    return {
        "PATH": f"{Path(kernel_python()).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/workspace",
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": threads,
        "OPENBLAS_NUM_THREADS": threads,
        "MKL_NUM_THREADS": threads,
        "NUMEXPR_NUM_THREADS": threads,
        "PYTHONDONTWRITEBYTECODE": "1",
        # Keep the kernel's own files out of the workspace: it should hold model artifacts only.
        "IPYTHONDIR": "/tmp/ipython",
        "JUPYTER_RUNTIME_DIR": "/tmp/jupyter",
        "MPLCONFIGDIR": "/tmp/mpl",
        "MNE_DONTWRITE_HOME": "true",
    }


def system_binds() -> list[str]:
    """/usr read-only, and the top-level bin/lib dirs as they are here (symlinks on merged-/usr)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def python_binds() -> list[tuple[str, str]]:
    """(host, inside) trees the kernel's Python needs. A virtualenv is mounted at VENV_INSIDE,
    not at its host path: the venv usually lives in the project directory, and that
    directory (with the ground truth beside it) must not even appear in the sandbox."""
    trees = {sys.base_prefix, str(Path(sys.executable).resolve().parent.parent)}
    binds = [(t, t) for t in sorted(trees) if not _under(t, ["/usr"])]
    if in_virtualenv():
        binds.append((sys.prefix, VENV_INSIDE))
    return binds


def in_virtualenv() -> bool:
    return sys.prefix != sys.base_prefix


def kernel_python() -> str:
    """The project's interpreter as seen inside the sandbox."""
    if not in_virtualenv():
        return sys.executable
    return f"{VENV_INSIDE}/{Path(sys.executable).relative_to(sys.prefix).as_posix()}"


def _under(path: str, trees: list[str]) -> bool:
    return any(path == t or path.startswith(t.rstrip("/") + "/") for t in trees)


def _dirs_for(path: str, made: set[str]) -> list[str]:
    """--dir options creating the parents of `path` as 0755: bwrap makes them 0700 otherwise,
    and the unprivileged kernel could not traverse them."""
    args: list[str] = []
    parts = PurePosixPath(path).parts[1:-1]
    for i in range(len(parts)):
        d = "/" + "/".join(parts[: i + 1])
        if d not in made:
            made.add(d)
            args += ["--perms", "0755", "--dir", d]
    return args


def input_binds(spec: SandboxSpec, made: set[str]) -> list[str]:
    args: list[str] = []
    for host, inside in input_mounts(spec):
        args += _dirs_for(inside, made) + ["--ro-bind", str(host), inside]
    if "/input" not in made:
        args += ["--perms", "0755", "--dir", "/input"]
    return args


def library_binds(spec: SandboxSpec, made: set[str]) -> list[str]:
    """Each library package read-only under LIBRARY_ROOT, which goes on PYTHONPATH."""
    mounts = library_mounts(spec)
    if not mounts:
        return []
    args: list[str] = []
    for host, inside in mounts:
        args += _dirs_for(inside, made) + ["--ro-bind", str(host), inside]
    return args + ["--setenv", "PYTHONPATH", LIBRARY_ROOT]


def bwrap_argv(spec: SandboxSpec, box_dir: Path, conn_inside: str, as_root: bool) -> list[str]:
    made: set[str] = set()
    argv = [
        "bwrap",
        "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--hostname", "sandbox", "--die-with-parent", "--new-session", "--clearenv",
    ]
    if not as_root:  # a user namespace maps the unprivileged caller; no setpriv needed
        argv += ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--cap-drop", "ALL"]
    for key, value in sandbox_env(spec.limits).items():
        argv += ["--setenv", key, value]
    argv += system_binds()
    for host, inside in python_binds():
        argv += _dirs_for(inside, made) + ["--ro-bind", host, inside]
    argv += ["--perms", "0755", "--dir", "/etc"]
    for name in ("passwd", "group", "hosts"):
        argv += ["--ro-bind", str(box_dir / "etc" / name), f"/etc/{name}"]
    for name in ("ld.so.cache", "localtime", "fonts"):  # fonts: fontconfig complains without it
        if os.path.exists(f"/etc/{name}"):
            argv += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    # Sized tmpfs: it is memory, and with rlimits alone nothing else would bound it.
    tmpfs_size = str(spec.limits.memory_mb * 1024 * 1024)
    argv += [
        "--proc", "/proc", "--dev", "/dev",
        "--perms", "1777", "--size", tmpfs_size, "--tmpfs", "/tmp",
        "--perms", "1777", "--size", tmpfs_size, "--tmpfs", "/dev/shm",
        "--bind", os.path.abspath(spec.workspace), "/workspace",
        "--bind", str(box_dir / "sock"), INSIDE_SOCKET_DIR,
    ]
    argv += input_binds(spec, made)
    argv += library_binds(spec, made)
    argv += ["--chdir", "/workspace"]
    if as_root:  # bwrap as root keeps capabilities and uid 0: drop both for good
        argv += ["setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups",
                 "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return argv + kernel_command(conn_inside, spec.limits)


def kernel_command(conn_inside: str, limits: Limits) -> list[str]:
    """The project's own interpreter runs the kernel."""
    return kernel.kernel_argv(kernel_python(), conn_inside, limits.output_budget_chars)


def _write_etc(etc: Path) -> None:
    etc.mkdir(exist_ok=True)
    uid = SANDBOX_UID
    (etc / "passwd").write_text(
        "root:x:0:0:root:/root:/usr/sbin/nologin\n"
        f"sandbox:x:{uid}:{uid}:eegbench sandbox:/workspace:/usr/sbin/nologin\n"
    )
    (etc / "group").write_text(f"root:x:0:\nsandbox:x:{uid}:\n")
    (etc / "hosts").write_text("127.0.0.1 localhost sandbox\n::1 localhost\n")
    for f in etc.iterdir():
        f.chmod(0o644)


# --- owner records and stale collection ------------------------------------------------------


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def ensure_private_dir(path: Path) -> None:
    """Create the state dir, or accept it only if nobody else could have planted things in it
    (it is under the world-writable /tmp, and root binds what it finds there into sandboxes)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise SandboxError(f"sandbox state dir {path} is not a private directory of uid {os.geteuid()}")


def _controller_alive(owner: dict) -> bool:
    return _same_process(owner.get("controller_pid"), owner.get("controller_start"))


def _remove_box(box: Path, owner: dict | None) -> None:
    """Kill whatever a sandbox dir records, remove its cgroups and the dir itself."""
    owner = owner or {}
    for pid, start in reversed(owner.get("processes", [])):  # namespace init first
        if _same_process(pid, start):
            _kill(pid)
    remove_cgroups(owner.get("cgroups", {}).values())
    shutil.rmtree(box, ignore_errors=True)


def collect_stale(state_dir: Path = STATE_DIR) -> int:
    removed = 0
    if state_dir.is_dir():
        for box in state_dir.iterdir():
            owner = _read_json(box / "owner.json")
            if owner is not None and _controller_alive(owner):
                continue
            if owner is None and _name_pid_alive(box) and _younger_than(box, STALE_UNOWNED_S):
                continue  # possibly being created right now by a live controller
            _remove_box(box, owner)
            removed += 1
    for parent in cgroup_parents().values():
        removed += _collect_stale_cgroups(parent, state_dir)
    return removed


def _name_pid_alive(box: Path) -> bool:
    """Box dirs are named <controller pid>-<hex>: a dead pid means nobody is creating it."""
    pid = box.name.split("-", 1)[0]
    return not pid.isdigit() or Path(f"/proc/{pid}").exists()


def _younger_than(path: Path, seconds: float) -> bool:
    try:
        return time.time() - path.stat().st_mtime < seconds
    except OSError:
        return True  # vanished meanwhile: another collector got it


def _collect_stale_cgroups(parent: Path, state_dir: Path) -> int:
    """Cgroups whose sandbox dir vanished: named <controller pid>-<hex>."""
    removed = 0
    if not parent.is_dir():
        return 0
    for group in parent.iterdir():
        if not group.is_dir() or (state_dir / group.name).exists():
            continue
        pid = group.name.split("-", 1)[0]
        if pid.isdigit() and Path(f"/proc/{pid}").exists():
            continue
        remove_cgroups([group])
        removed += 1
    return removed


# --- the sandbox -------------------------------------------------------------------------------


class LocalSandbox(Sandbox):
    def __init__(self, spec: SandboxSpec, state_dir: Path = STATE_DIR) -> None:
        self.spec = spec
        self.name = f"{os.getpid()}-{secrets.token_hex(4)}"
        self.box = state_dir / self.name
        self.sock = self.box / "sock"
        self.cgroups: dict[str, str] = {}
        self.limits_via = "rlimits"
        self._as_root = os.geteuid() == 0
        self._key = kernel.new_key()
        self._proc: subprocess.Popen | None = None
        self._client: BlockingKernelClient | None = None
        self._init_pid: int | None = None
        self._kernel_pid: int | None = None
        self._log: deque[str] = deque(maxlen=40)
        self._oom_base = 0
        self._pids_max_base = 0
        self._lock = threading.RLock()
        self._closed = False
        self._owner = {
            "controller_pid": os.getpid(),
            "controller_start": _start_time(os.getpid()),
            "run_id": spec.run_id,
            "case_id": spec.case_id,
            "created": time.time(),
            "cgroups": {},
            "processes": [],
        }

    # -- setup --

    def prepare(self) -> None:
        """Create the on-disk state, cgroups and workspace; raise SandboxError on failure."""
        kernel.socket_dir_ok(self.sock, INSIDE_SOCKET_DIR)
        ensure_private_dir(self.box.parent)
        self.box.mkdir(mode=0o700)
        _write_json(self.box / "owner.json", self._owner | {"cgroups": self._planned_cgroups()})
        _write_etc(self.box / "etc")
        self.sock.mkdir(mode=0o700)
        self._prepare_workspace()
        if self._as_root:
            os.chown(self.sock, SANDBOX_UID, SANDBOX_UID)
        self.conn_inside = kernel.write_kernel_connection_file(self.sock, INSIDE_SOCKET_DIR, self._key)
        try:
            self.cgroups = create_cgroups(self.name, self.spec.limits)
            self.limits_via = "cgroups"
        except OSError as exc:
            self.limits_via = f"rlimits (cgroups not writable: {exc})"
        self._owner["cgroups"] = self.cgroups
        _write_json(self.box / "owner.json", self._owner)

    def _planned_cgroups(self) -> dict[str, str]:
        return {c: str(p / self.name) for c, p in cgroup_parents().items()}

    def _prepare_workspace(self) -> None:
        ws = Path(self.spec.workspace)
        (ws / "file_check").mkdir(parents=True, exist_ok=True)
        if self._as_root:
            # lchown only the two directories: never follow what a previous attempt left.
            for d in (ws, ws / "file_check"):
                os.chown(d, SANDBOX_UID, SANDBOX_UID, follow_symlinks=False)

    def _launch_argv(self) -> list[str]:
        limits = self.spec.limits
        cfg = {
            "parent": os.getpid(),
            "cgroup_procs": [str(Path(p) / "cgroup.procs") for p in self.cgroups.values()],
            # Fallback only. RLIMIT_NPROC counts every process of the sandbox uid on the host.
            "rlimits": {} if self.cgroups else {
                "RLIMIT_AS": limits.memory_mb * 1024 * 1024, "RLIMIT_NPROC": limits.pids},
        }
        argv = bwrap_argv(self.spec, self.box, self.conn_inside, self._as_root)
        return [sys.executable, "-I", "-S", "-c", REAPER, json.dumps(cfg), *argv]

    def launch(self) -> None:
        """Start the kernel process and wait until it answers (SandboxError otherwise)."""
        with self._lock:
            if self._closed:
                raise SandboxError(f"{self.spec.case_id}: sandbox already closed")
            kernel.remove_socket_files(self.sock)
            self._log.clear()
            self._proc = _SPAWNER.popen(
                self._launch_argv(),
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                start_new_session=True,  # the controller's Ctrl-C must not reach the kernel
                env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
            )
            threading.Thread(target=self._read_log, args=(self._proc,), daemon=True).start()
            self._record_processes([self._proc.pid])
            self._oom_base = self._oom_count()
            self._pids_max_base = self._pids_max_count()
            if self._client is not None:
                self._client.stop_channels()
            self._client = kernel.connect(self.sock, self._key)
            try:
                kernel.wait_ready(self)
            except SandboxError as exc:
                self.hard_kill()
                raise SandboxError(f"{self.spec.case_id}: {exc}; kernel output tail:\n{self.log_tail()}") from None
            self._find_pids()

    def _read_log(self, proc: subprocess.Popen) -> None:
        # A bounded tail: the sandbox can write to this pipe without limit.
        for raw in iter(lambda: proc.stdout.readline(4096), b""):
            self._log.append(raw.decode("utf-8", "replace").rstrip("\n"))
        proc.stdout.close()

    def log_tail(self) -> str:
        return "\n".join(self._log) or "(no output)"

    def _find_pids(self) -> None:
        """reaper -> outer bwrap -> namespace init -> kernel (each has exactly one child)."""
        chain = [self._proc.pid]
        for _ in range(3):
            kids = _children(chain[-1])
            if not kids:
                break
            chain.append(kids[0])
        self._init_pid = chain[2] if len(chain) > 2 else None
        self._kernel_pid = chain[3] if len(chain) > 3 else None
        self._record_processes(chain[:3])

    def _record_processes(self, pids: list[int]) -> None:
        self._owner["processes"] = [[p, _start_time(p)] for p in pids]
        _write_json(self.box / "owner.json", self._owner)

    # -- KernelHost --

    @property
    def client(self) -> BlockingKernelClient:
        if self._client is None:
            raise SandboxError(f"{self.spec.case_id}: sandbox not started")
        return self._client

    def alive(self) -> bool:
        return not self._closed and self._proc is not None and self._proc.poll() is None

    def exit_code(self) -> int | None:
        return self._proc.poll() if self._proc else None

    def interrupt(self) -> None:
        if self._kernel_pid and self.alive():
            _kill(self._kernel_pid, signal.SIGINT)
        elif self._client is not None:
            kernel.request_interrupt(self._client)

    def hard_kill(self) -> None:
        with self._lock:
            proc = self._proc
            if proc is None:
                return
            if self._init_pid is None and proc.poll() is None:
                self._find_pids()  # a start that failed never looked them up
            if self._init_pid and proc.poll() is None:
                _kill(self._init_pid)  # pid 1 of the namespace: the kernel kills the rest
                _wait(proc, 2.0)  # bwrap and then the reaper exit by themselves
            if proc.poll() is None:
                for pid in reversed(_descendants(proc.pid)):
                    _kill(pid)
                _wait(proc, 1.0)  # the reaper reaps them and exits
                proc.kill()
            _wait(proc, 5.0)
            for path in self.cgroups.values():
                kill_cgroup(path)  # anything that escaped the namespace's process tree
            self._init_pid = self._kernel_pid = None

    def restart(self) -> None:
        self.hard_kill()
        self.launch()

    def _oom_count(self) -> int:
        path = self.cgroups.get("memory")
        return _counter(Path(path, "memory.oom_control"), "oom_kill") if path else 0

    def _pids_max_count(self) -> int:
        path = self.cgroups.get("pids")
        return _counter(Path(path, "pids.events"), "max") if path else 0

    def oom_killed(self) -> bool:
        return self._oom_count() > self._oom_base

    def contain(self, sweep: bool = False) -> int:
        """After the process limit was hit (a fork bomb), kill every process but the kernel."""
        if not self._kernel_pid or not (self._pids_limit_hit() or sweep):
            return 0
        return kill_strays(self._init_pid or self._kernel_pid, self._kernel_pid, self._client)

    def _pids_limit_hit(self) -> bool:
        if self.cgroups:
            hits = self._pids_max_count()
            hit, self._pids_max_base = hits > self._pids_max_base, hits
            return hit
        # rlimit fallback: no event counter. RLIMIT_NPROC counts all tasks (threads) of the
        # sandbox uid on the host, so the limit is hit when that total reaches it; a bomb
        # whose copies already died leaves zombie children (each holding a slot) instead.
        if _tasks_of_uid(SANDBOX_UID) >= self.spec.limits.pids - 1:
            return True
        return len(_children(self._kernel_pid)) >= max(8, self.spec.limits.pids // 4)

    # -- Sandbox --

    def execute(self, code: str) -> Observation:
        return kernel.run_cell_unless_closed(self, code, self.spec.limits, lambda: self._closed)

    def close(self) -> None:
        self._closed = True
        with self._lock:
            if self._proc is None and not self.box.exists():
                return
            if self._client is not None and self._proc is not None and self._proc.poll() is None:
                kernel.shutdown(self._client)
                try:
                    self._proc.wait(timeout=CLOSE_WAIT_S)
                except subprocess.TimeoutExpired:
                    pass
            self.hard_kill()
            self._proc = None
            if self._client is not None:
                self._client.stop_channels()
                self._client = None
            remove_cgroups(self.cgroups.values())
            shutil.rmtree(self.box, ignore_errors=True)


class LocalBackend(Backend):
    name = "local"

    def __init__(self, state_dir: Path = STATE_DIR) -> None:
        self.state_dir = state_dir
        self._available: tuple[bool, str] | None = None

    def available(self) -> tuple[bool, str]:
        if self._available is None:
            self._available = self._probe()
        return self._available

    def _probe(self) -> tuple[bool, str]:
        tools = ["bwrap"] + (["setpriv"] if os.geteuid() == 0 else [])
        missing = [t for t in tools if shutil.which(t) is None]
        if missing:
            return False, f"missing executables: {', '.join(missing)} (install bubblewrap and util-linux)"
        probe = ["bwrap", "--unshare-pid", "--unshare-net", *system_binds(),
                 "--proc", "/proc", "--dev", "/dev", "true"]
        if os.geteuid() != 0:
            probe[1:1] = ["--unshare-user"]
        done = subprocess.run(probe, check=False, capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            return False, f"bubblewrap cannot create namespaces here: {done.stderr.strip()[-300:]}"
        return True, f"bubblewrap {shutil.which('bwrap')}; limits via {limits_mechanism()}"

    def start(self, spec: SandboxSpec) -> LocalSandbox:
        ok, why = self.available()
        if not ok:
            raise SandboxError(f"{spec.case_id}: local sandbox unavailable: {why}")
        box = LocalSandbox(spec, self.state_dir)
        try:
            box.prepare()
            box.launch()
        except OSError as exc:
            box.close()
            raise SandboxError(f"{spec.case_id}: local sandbox setup failed: {exc}") from exc
        except BaseException:
            box.close()
            raise
        return box

    def collect_stale(self) -> int:
        return collect_stale(self.state_dir)
