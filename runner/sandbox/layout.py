"""What every sandbox looks like from inside, whatever the backend, and where its host state goes.

Inside: an unprivileged uid that owns nothing on the host; /workspace (read-write, the
instance's artifacts, file_check/ for checked outputs); /input/<rel> (read-only, only the
instance's files); /kernel (the kernel's unix sockets and connection file); library packages
read-only under LIBRARY_ROOT, which goes on PYTHONPATH; an environment of our own making.

Host state: one private directory per sandbox under a per-backend state dir in /tmp, kept
short because the kernel's unix socket paths must stay under 107 bytes (sun_path).
"""
from __future__ import annotations

import math
import os
import stat
from pathlib import Path, PurePosixPath

from runner.sandbox.base import Limits, SandboxError, SandboxSpec

SANDBOX_UID = 65534  # "nobody" on Debian: owns nothing on the host
INSIDE_SOCKET_DIR = "/kernel"
WORKSPACE = "/workspace"
INPUT_ROOT = "/input"
LIBRARY_ROOT = "/opt/eegbench-lib"
FILE_CHECK_DIR = "file_check"  # under the workspace: where checked output files go


def state_dir(tag: str) -> Path:
    """A backend's state dir: short on purpose (socket paths < 107 bytes); one per user, since
    it must be private."""
    uid = os.geteuid()
    return Path(f"/tmp/eegbench-{tag}" if uid == 0 else f"/tmp/eegbench-{tag}-{uid}")


def ensure_private_dir(path: Path) -> None:
    """Create the state dir, or accept it only if nobody else could have planted things in it
    (it is under the world-writable /tmp, and root binds what it finds there into sandboxes)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise SandboxError(f"sandbox state dir {path} is not a private directory of uid {os.geteuid()}")


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


def sandbox_env(limits: Limits, kernel_python: str) -> dict[str, str]:
    """The kernel's whole environment (nothing of the controller's): kernel_python's directory
    first on PATH, BLAS threads pinned to the CPU limit, the kernel's own files kept in /tmp."""
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
