"""What every sandbox looks like from inside, whatever the backend, and where its host state goes.

Inside: an unprivileged uid that owns nothing on the host; /workspace (read-write, the
instance's artifacts, file_check/ for checked outputs); /input/<rel> (read-only, only the
instance's files); /kernel (the kernel's unix sockets and connection file); library packages
read-only under LIBRARY_ROOT, which goes on PYTHONPATH; an environment of our own making.

Host state: everything under one private directory per user, USER_DIR
(<temp dir>/eegbench-<uid>, mode 0700): a state dir per backend holding one directory per
sandbox, and the workspaces. Per user, so that people sharing a machine never see, collect
or break each other's sandboxes; short, because the kernel's unix socket paths under it
must stay under 107 bytes (sun_path).
"""
from __future__ import annotations

import math
import os
import stat
import tempfile
from pathlib import Path, PurePosixPath

from runner.benchmark import numerics
from runner.sandbox.base import Limits, SandboxError, SandboxSpec
from runner.sandbox.bootstrap import PRELOAD_ENV
from runner.sandbox.kernel_jit import JIT_CACHE_ENV, JIT_CACHE_WRITE_ENV

SANDBOX_UID = 65534  # "nobody" on Debian: owns nothing on the host
INSIDE_SOCKET_DIR = "/kernel"
WORKSPACE = "/workspace"
INPUT_ROOT = "/input"
LIBRARY_ROOT = "/opt/eegbench-lib"
JIT_CACHE_ROOT = "/opt/eegbench-jit"
FILE_CHECK_DIR = "file_check"  # under the workspace: where checked output files go


def user_dir() -> Path:
    """This user's directory for eegbench's machine-local state (sandbox state dirs,
    workspaces): under the temp dir (TMPDIR, else /tmp), named for the uid."""
    return Path(tempfile.gettempdir()) / f"eegbench-{os.geteuid()}"


def state_dir(tag: str) -> Path:
    """A backend's state dir, in this user's directory."""
    return user_dir() / tag


def ensure_private_dir(path: Path) -> None:
    """Create `path` (and this user's directory above it) as 0700, or accept what exists only
    if nobody else could have planted things in it: it is under the world-writable temp dir,
    and a root controller binds what it finds there into sandboxes. SandboxError says whose
    it is and what to do."""
    top = user_dir()
    for d in (top, path) if path != top else (top,):
        d.mkdir(mode=0o700, exist_ok=True, parents=d is not top)
        st = os.lstat(d)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022:
            # Ours, and nobody else could ever write in it (only its owner or root can change
            # its mode): a umask-made 0755 is closed, not refused.
            if st.st_mode & 0o077:
                os.chmod(d, 0o700)
            continue
        what = "not a directory" if not stat.S_ISDIR(st.st_mode) else (
            f"owned by uid {st.st_uid}" if st.st_uid != os.geteuid() else f"writable by others (mode {st.st_mode & 0o777:o})")
        raise SandboxError(f"{d} is {what}, but it must be a private directory of uid {os.geteuid()}: "
                           f"remove it (as its owner or root), or point TMPDIR at a directory of your own")


def prepare_workspace(workspace: Path, as_root: bool) -> None:
    """Create the workspace and its file_check dir; a root controller hands both to SANDBOX_UID."""
    ws = Path(workspace)
    (ws / FILE_CHECK_DIR).mkdir(parents=True, exist_ok=True)
    if as_root:
        # lchown only the two directories: never follow what a previous attempt left.
        for d in (ws, ws / FILE_CHECK_DIR):
            os.chown(d, SANDBOX_UID, SANDBOX_UID, follow_symlinks=False)


def input_mounts(spec: SandboxSpec) -> list[tuple[Path, str]]:
    """(host file, path under /input) for each of the spec's inputs; SandboxError names the
    instance and the input when one is not a data-root-relative path of an existing file."""
    mounts = []
    for rel in spec.inputs:
        parts = PurePosixPath(rel).parts
        if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
            raise SandboxError(f"{spec.case_id}: input path {rel!r} must be relative to the data root")
        host = Path(os.path.abspath(spec.data_root)) / rel
        if not host.is_file():
            raise SandboxError(f"{spec.case_id}: input file {host} does not exist")
        mounts.append((host, f"{INPUT_ROOT}/" + "/".join(parts)))
    return mounts


def jit_cache_mount(spec: SandboxSpec, inside: str = JIT_CACHE_ROOT) -> list[tuple[Path, str, bool]]:
    """(host dir, `inside`, read-only) for the spec's compile cache, if it has one."""
    if spec.jit_cache is None:
        return []
    host = Path(os.path.abspath(spec.jit_cache.host))
    if not host.is_dir():
        raise SandboxError(f"{spec.case_id}: compile cache {host} is not a directory")
    return [(host, inside, not spec.jit_cache.writable)]


def library_mounts(spec: SandboxSpec) -> list[tuple[Path, str]]:
    """(host package dir, path under LIBRARY_ROOT) for each library; LIBRARY_ROOT goes on the
    kernel's PYTHONPATH. SandboxError names the instance and the library at fault."""
    mounts, names = [], set()
    for lib in spec.libraries:
        host = Path(os.path.abspath(lib))
        if not (host / "__init__.py").is_file():
            raise SandboxError(f"{spec.case_id}: library {host} is not a Python package directory")
        if host.name in names:
            raise SandboxError(f"{spec.case_id}: two libraries named {host.name!r}")
        names.add(host.name)
        mounts.append((host, f"{LIBRARY_ROOT}/{host.name}"))
    return mounts


def kernel_env(spec: SandboxSpec, kernel_python: str, jit_root: str = JIT_CACHE_ROOT) -> dict[str, str]:
    """sandbox_env for the spec's kernel, with LIBRARY_ROOT on PYTHONPATH when it has libraries
    and the compile cache's variables when it mounts one (at `jit_root`)."""
    env = sandbox_env(spec.limits, kernel_python)
    if spec.libraries:
        env["PYTHONPATH"] = LIBRARY_ROOT
    if spec.preload:
        env[PRELOAD_ENV] = ",".join(spec.preload)
    if spec.jit_cache is not None:
        env[JIT_CACHE_ENV] = jit_root
        if spec.jit_cache.writable:
            env[JIT_CACHE_WRITE_ENV] = "1"
    return env


def sandbox_env(limits: Limits, kernel_python: str) -> dict[str, str]:
    """The kernel's whole environment (nothing of the controller's): kernel_python's directory
    first on PATH, BLAS threads pinned to the CPU limit and BLAS and numpy to the controller's
    CPU paths (runner/benchmark/numerics.py), the kernel's own files kept in /tmp."""
    threads = str(max(1, math.ceil(limits.cpus)))
    return {
        "PATH": f"{PurePosixPath(kernel_python).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": WORKSPACE,
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": threads,
        "OPENBLAS_NUM_THREADS": threads,
        "MKL_NUM_THREADS": threads,
        "NUMEXPR_NUM_THREADS": threads,
        # The CPU paths ground truth was computed on, so the oracle's cells agree with it to the bit.
        **numerics.pinned_env(),
        "PYTHONDONTWRITEBYTECODE": "1",
        # Keep the kernel's own files out of the workspace: it should hold model artifacts only.
        "IPYTHONDIR": "/tmp/ipython",
        "JUPYTER_RUNTIME_DIR": "/tmp/jupyter",
        "MPLCONFIGDIR": "/tmp/mpl",
        "MNE_DONTWRITE_HOME": "true",
        # tqdm.auto (imported by yasa, used by mne) finds the kernel but no ipywidgets and warns
        # on stderr, i.e. into the model's first observation. ipywidgets is not the cure: its
        # bar reaches the model as one frozen "0%" snapshot. The console bar it falls back to
        # shows real progress; the filter silences that one message only (no import needed).
        "PYTHONWARNINGS": "ignore:IProgress not found",
        # The console bar redraws every 0.1 s, and each redraw stays in the observation (no
        # terminal collapses the \r): a 15 s loop would fill the output budget. Explicit
        # mininterval= in the model's code still wins.
        "TQDM_MININTERVAL": "5",
    }
