"""The kernels' numba compile cache: made once per backend and CPU, read-only in every sandbox.

`build` starts one sandbox of the backend with the cache directory mounted writable and runs
WARM_UP (every antropy feature, yasa's sleep-staging features): kernel_jit.py, inside the
kernel, saves what numba compiles. The directory is named for what makes it valid (the
backend's kernel environment, this CPU, the hook's own code), so a new image, another CPU or a
changed hook simply names a directory that does not exist yet. `make setup` and `make image`
build it, `make eval` rebuilds it when it is missing; a run without one says so once and its
kernels compile for themselves (slower, never wrong).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sysconfig
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from runner.core.settings import SandboxLimits
from runner.sandbox.base import Backend, JitCacheMount, SandboxError, SandboxSpec
from runner.sandbox.layout import ensure_private_dir, user_dir

log = logging.getLogger(__name__)

JIT_LIBRARIES = ("numba", "llvmlite", "numpy", "antropy", "yasa", "mne")
MANIFEST = "manifest.json"  # written last: its presence marks a finished build
BUILD_TIMEOUT_S = 900.0  # the compile itself takes ~30 s on a quiet core

# Every function the cache must hold: each antropy feature on the float64 arrays analyses
# use, and yasa.SleepStaging's feature extraction (which calls antropy on 30 s epochs).
WARM_UP = """
import numpy as np, mne, yasa, antropy as ant
rng = np.random.default_rng(0)
x = rng.standard_normal(3000)
xs = rng.standard_normal((4, 3000))
for f in (ant.perm_entropy, ant.svd_entropy, ant.app_entropy,
          ant.sample_entropy, ant.hjorth_params, ant.num_zerocross, ant.petrosian_fd,
          ant.katz_fd, ant.higuchi_fd, ant.detrended_fluctuation):
    f(x)
ant.spectral_entropy(x, sf=100)
ant.lziv_complexity(x > 0)
ant.lziv_complexity("0110")
for f in (ant.hjorth_params, ant.num_zerocross, ant.petrosian_fd, ant.katz_fd):
    f(xs, axis=1)
info = mne.create_info(["C4", "EOG", "EMG"], 100.0, ["eeg", "eog", "emg"])
raw = mne.io.RawArray(rng.standard_normal((3, 100 * 60 * 10)) * 1e-5, info, verbose=False)
yasa.SleepStaging(raw, eeg_name="C4", eog_name="EOG", emg_name="EMG").get_features()
print("warm")
"""


class JitCacheError(RuntimeError):
    """The compile cache could not be built (names the backend and what the kernel said)."""


def cache_root(project_cache: Path) -> Path:
    """Where every compile cache of this checkout lives."""
    return project_cache / "jit"


def cpu_identity() -> str:
    """This CPU's model and feature flags (numba's compiled code is specific to both)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    first = text.split("\n\n", 1)[0]
    wanted = ("vendor_id", "model name", "flags", "Features", "CPU implementer", "CPU part")
    lines = [line for line in first.splitlines() if line.split(":", 1)[0].strip() in wanted]
    return "\n".join(lines) or "unknown"


def cache_key(described: dict[str, Any]) -> str:
    """The name of the cache valid for a backend that describes itself as `described`, here."""
    hook = Path(__file__).with_name("kernel_jit.py").read_bytes()
    basis: dict[str, Any] = {"backend": described["name"], "cpu": cpu_identity(),
                             "hook": hashlib.sha256(hook).hexdigest()}
    if "image_id" in described:
        basis["image_id"] = described["image_id"]
    else:  # the local backend's kernels run this venv
        basis["purelib"] = sysconfig.get_paths()["purelib"]
        basis["versions"] = {name: _version(name) for name in JIT_LIBRARIES}
    digest = hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()[:16]
    return f"{described['name']}-{digest}"


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def is_local(described: dict[str, Any]) -> bool:
    """Whether the backend's kernels run the controller's own venv (no image)."""
    return "image_id" not in described


def cache_dir(project_cache: Path, backend: Backend) -> Path:
    """The backend's cache directory on this machine (it may not exist yet)."""
    return cache_root(project_cache) / cache_key(backend.describe())


def ready(directory: Path, local: bool) -> str | None:
    """None when `directory` holds a finished build still matching the environment, else why
    not. For the local venv the sources' stamps are checked too (a reinstall of the same
    versions changes them, and numba would then miss every entry)."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
    except FileNotFoundError:
        return "not built"
    except (OSError, ValueError) as exc:
        return f"unreadable manifest ({exc})"
    if not local:
        return None
    purelib = Path(sysconfig.get_paths()["purelib"])
    for relative, (mtime_ns, size) in manifest.get("sources", {}).items():
        try:
            st = (purelib / relative).stat()
        except OSError:
            return f"{relative} is gone"
        if (st.st_mtime_ns, st.st_size) != (mtime_ns, size):
            return f"{relative} changed since the build"
    return None


def host_cache(project_cache: Path) -> Path | None:
    """The local backend's cache when it is ready, else None. Its kernels run this venv, so
    the controller's own workers (the reference scripts' pool) load the same compiled code."""
    directory = cache_root(project_cache) / cache_key({"name": "local"})
    return directory if ready(directory, local=True) is None else None


def resolve(project_cache: Path, backend: Backend) -> tuple[JitCacheMount | None, str]:
    """The cache a run's sandboxes mount, or None and why there is none."""
    directory = cache_dir(project_cache, backend)
    why = ready(directory, is_local(backend.describe()))
    if why is not None:
        return None, f"no compile cache for {backend.name} on this CPU ({why}): kernels compile numba code themselves (slower); `make setup` or `eegbench jit-cache --sandbox {backend.name}` builds it"
    return JitCacheMount(directory), f"compile cache {directory}"


def ensure(project_cache: Path, backend: Backend, data_root: Path, rebuild: bool = False) -> tuple[Path, bool]:
    """Build the backend's cache unless a valid one exists (or `rebuild`); (its directory,
    whether built now)."""
    directory = cache_dir(project_cache, backend)
    if not rebuild and ready(directory, is_local(backend.describe())) is None:
        return directory, False
    build(backend, directory, data_root)
    return directory, True


def build(backend: Backend, directory: Path, data_root: Path) -> None:
    """Run WARM_UP in a sandbox that saves into a fresh directory, then put it in place."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned(directory.parent)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    os.chmod(staging, 0o777)  # the sandbox's uid writes here (root's sandboxes run as nobody)
    try:
        _compile_into(backend, staging, data_root)
        sources = _cached_sources(staging) if is_local(backend.describe()) else {}
        _make_readable(staging)
        (staging / MANIFEST).write_text(json.dumps({"backend": backend.name, "sources": sources}, indent=1))
        for older in directory.parent.glob(f"{backend.name}-*"):  # another image, CPU or hook
            shutil.rmtree(older)
        staging.rename(directory)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _remove_abandoned(root: Path) -> None:
    """Staging directories of builds that died (older than any build could take)."""
    for staging in root.glob(".*"):
        try:
            if time.time() - staging.stat().st_mtime > 2 * BUILD_TIMEOUT_S:
                shutil.rmtree(staging, ignore_errors=True)
        except OSError:
            continue


def _compile_into(backend: Backend, staging: Path, data_root: Path) -> None:
    work = user_dir() / "work"
    ensure_private_dir(work)
    with tempfile.TemporaryDirectory(prefix="jit-", dir=work) as workspace:
        limits = SandboxLimits(exec_timeout_s=BUILD_TIMEOUT_S)
        spec = SandboxSpec("jit-cache", "build", data_root, (), Path(workspace), limits,
                           jit_cache=JitCacheMount(staging, writable=True))
        try:
            with backend.start(spec) as sandbox:
                observation = sandbox.execute(WARM_UP)
        except SandboxError as exc:
            raise JitCacheError(f"compile cache for {backend.name}: the sandbox did not start: {exc}") from exc
    if observation.status != "ok" or "warm" not in observation.text:
        raise JitCacheError(f"compile cache for {backend.name}: the warm-up failed ({observation.status}):\n{observation.text[-2000:]}")


def _cached_sources(staging: Path) -> dict[str, list[int]]:
    """Stamps (mtime_ns, size) of the environment sources the cache holds code of, read on the
    host (the local venv); empty for an image, whose files the host does not see."""
    purelib = Path(sysconfig.get_paths()["purelib"])
    sources: dict[str, list[int]] = {}
    for index in sorted(staging.rglob("*.nbi")):
        module = index.parent.relative_to(staging)
        source = purelib / module.with_suffix(".py")
        if source.is_file():
            st = source.stat()
            sources[str(module.with_suffix(".py"))] = [st.st_mtime_ns, st.st_size]
    return sources


def _make_readable(root: Path) -> None:
    """Directories 0755, files 0644: every sandbox reads, nobody but the builder writes."""
    for path in [root, *root.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
