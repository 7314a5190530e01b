"""The `docker` backend: one network-less container per instance running the kernel image.

Same contract as the local backend (DESIGN.md "Sandbox"); the execution policy (timeout,
interrupt, grace, hard kill, restart, output budget) is kernel.py's, shared by both.

Container settings: --network none, read-only root, tmpfs /tmp and /dev/shm, cap-drop ALL,
no-new-privileges, --init (docker-init is pid 1 and forwards signals to the kernel, pid 2),
non-root user 65534, memory with memory+swap equal, pids and CPU limits, BLAS threads pinned.
Only the instance's inputs are bind-mounted (read-only, /input/<rel>), the workspace
read-write at /workspace and a per-sandbox socket dir at /kernel: the kernel talks ZeroMQ ipc
through unix sockets there, so no network is needed between controller and kernel.

Liveness, exit code and OOM come from the container state. A kernel restart replaces the
container (same settings, same workspace): Docker keeps OOMKilled set across restarts.
Containers carry labels eegbench.run, eegbench.case and eegbench.controller (pid and start
time of the controller process); `collect_stale` removes those whose controller is gone.

Host-side state, one directory per sandbox (short: socket paths < 107 bytes):
    <STATE_DIR>/<controller pid>-<hex>/sock/   bind-mounted at /kernel: sockets + kernel.json
"""
from __future__ import annotations

import os
import secrets
import shutil
import threading
import time
from pathlib import Path

from jupyter_client.blocking.client import BlockingKernelClient

from runner.sandbox import kernel, local
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
from runner.sandbox.image import image_tag
from runner.transcript import Observation

STATE_DIR = Path("/tmp/eegbench-dkr" if os.geteuid() == 0 else f"/tmp/eegbench-dkr-{os.geteuid()}")
SANDBOX_UID = 65534  # as the local backend: owns nothing on the host
INSIDE_SOCKET_DIR = "/kernel"
KERNEL_PYTHON = "/opt/venv/bin/python"
LABEL = "eegbench"  # label prefix
CLOSE_WAIT_S = 1.0  # ipykernel sometimes hangs on shutdown: wait this long, then kill
STOP_WAIT_S = 10.0
API_TIMEOUT_S = 60


def _docker_client():
    import docker  # imported lazily: only this backend needs the SDK

    return docker.from_env(timeout=API_TIMEOUT_S)


def _api_error():
    import docker.errors

    return docker.errors.APIError, docker.errors.NotFound, docker.errors.DockerException


def container_env(spec: SandboxSpec) -> dict[str, str]:
    """The local backend's kernel environment, with the image's interpreter on PATH."""
    env = local.sandbox_env(spec.limits) | {"PATH": f"{Path(KERNEL_PYTHON).parent}:/usr/local/bin:/usr/bin:/bin"}
    if spec.libraries:
        env["PYTHONPATH"] = LIBRARY_ROOT
    return env


def sandbox_user() -> str:
    """uid:gid of the kernel. A root controller hands the workspace and socket dir to the
    unprivileged sandbox uid; any other controller (a docker-group member) cannot chown, so
    the kernel runs as the controller's own unprivileged uid and can write what it owns."""
    if os.geteuid() == 0:
        return f"{SANDBOX_UID}:{SANDBOX_UID}"
    return f"{os.geteuid()}:{os.getegid()}"


def kernel_command(conn_inside: str, limits: Limits) -> list[str]:
    """The image's interpreter runs the kernel (replaceable in tests, as in the local backend)."""
    return kernel.kernel_argv(KERNEL_PYTHON, conn_inside, limits.output_budget_chars)


def container_config(spec: SandboxSpec, image: str, sock: Path, labels: dict[str, str]) -> dict:
    """Keyword arguments of `containers.create` for one sandbox (pure: unit-testable)."""
    from docker.types import Mount

    limits = spec.limits
    memory = f"{limits.memory_mb}m"
    tmpfs_opts = f"rw,nosuid,nodev,size={limits.memory_mb}m,mode=1777"
    read_only = input_mounts(spec) + library_mounts(spec)
    mounts = [Mount(inside, str(host), type="bind", read_only=True) for host, inside in read_only]
    mounts += [
        Mount("/workspace", os.path.abspath(spec.workspace), type="bind", read_only=False),
        Mount(INSIDE_SOCKET_DIR, str(sock), type="bind", read_only=False),
    ]
    return {
        "image": image,
        "command": kernel_command(f"{INSIDE_SOCKET_DIR}/{kernel.KERNEL_CONNECTION_FILE}", limits),
        "user": sandbox_user(),
        "working_dir": "/workspace",
        "hostname": "sandbox",
        "environment": container_env(spec),
        "labels": labels,
        "network_mode": "none",
        "read_only": True,
        "tmpfs": {"/tmp": tmpfs_opts, "/dev/shm": tmpfs_opts},
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "init": True,
        "ipc_mode": "private",
        "mem_limit": memory,
        "memswap_limit": memory,  # equal: no swap beyond the memory limit
        "pids_limit": limits.pids,
        "nano_cpus": int(limits.cpus * 1e9),
        "mounts": mounts,
        "stdin_open": False,
        "tty": False,
        "log_config": {"type": "json-file", "config": {"max-size": "1m", "max-file": "1"}},
    }


class DockerSandbox(Sandbox):
    def __init__(self, spec: SandboxSpec, docker_client, image: str, state_dir: Path = STATE_DIR) -> None:
        self.spec = spec
        self.image = image
        self.name = f"{os.getpid()}-{secrets.token_hex(4)}"
        self.box = state_dir / self.name
        self.sock = self.box / "sock"
        self._docker = docker_client
        self._api = docker_client.api
        self._key = kernel.new_key()
        self._id: str | None = None
        self._client: BlockingKernelClient | None = None
        self._init_pid: int | None = None  # host pids, when the controller can see them
        self._kernel_pid: int | None = None
        self._pids_events: Path | None = None
        self._pids_max_base = 0
        self._lock = threading.RLock()
        self._closed = False

    @property
    def container_id(self) -> str | None:
        return self._id

    def labels(self) -> dict[str, str]:
        return {
            f"{LABEL}.run": self.spec.run_id,
            f"{LABEL}.case": self.spec.case_id,
            f"{LABEL}.controller": str(os.getpid()),
            f"{LABEL}.controller_start": str(local._start_time(os.getpid())),
            f"{LABEL}.box": str(self.box),
        }

    # -- setup --

    def create(self) -> None:
        kernel.socket_dir_ok(self.sock, INSIDE_SOCKET_DIR)
        config = container_config(self.spec, self.image, self.sock, self.labels())  # validates inputs
        local.ensure_private_dir(self.box.parent)
        self.box.mkdir(mode=0o700)
        self.sock.mkdir(mode=0o700)
        ws = Path(self.spec.workspace)
        (ws / "file_check").mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            os.chown(self.sock, SANDBOX_UID, SANDBOX_UID)
            for d in (ws, ws / "file_check"):  # lchown only these two: never follow links
                os.chown(d, SANDBOX_UID, SANDBOX_UID, follow_symlinks=False)
        kernel.write_kernel_connection_file(self.sock, INSIDE_SOCKET_DIR, self._key)
        self._config = config
        self._id = self._docker.containers.create(**config).id

    def launch(self) -> None:
        """Start the container and wait until its kernel answers (SandboxError otherwise)."""
        api_error, _, _ = _api_error()
        with self._lock:
            if self._closed:
                raise SandboxError(f"{self.spec.case_id}: sandbox already closed")
            kernel.remove_socket_files(self.sock)
            try:
                self._api.start(self._id)
            except api_error as exc:
                raise SandboxError(f"{self.spec.case_id}: docker start failed: {exc}") from None
            self._find_pids()
            if self._client is not None:
                self._client.stop_channels()
            self._client = kernel.connect(self.sock, self._key)
            try:
                kernel.wait_ready(self)
            except SandboxError as exc:
                self.hard_kill()
                raise SandboxError(f"{self.spec.case_id}: {exc}; kernel output tail:\n{self.log_tail()}") from None
            self._find_pids()  # the kernel may not have been forked by docker-init before
            # A (re)start makes a fresh pids cgroup: its limit-hit counter starts again.
            self._pids_events = _pids_events_file(self._init_pid) if self._init_pid else None
            self._pids_max_base = self._pids_max_count()

    def _state(self) -> dict:
        _, not_found, _ = _api_error()
        try:
            return self._api.inspect_container(self._id)["State"]
        except not_found:
            return {}

    def _find_pids(self) -> None:
        """docker-init's and the kernel's host pids (docker-init has exactly one child)."""
        state = self._state()
        init = state.get("Pid") or None
        self._init_pid = init
        kids = local._children(init) if init else []
        self._kernel_pid = kids[0] if kids else None

    def log_tail(self, lines: int = 40) -> str:
        api_error, _, _ = _api_error()
        try:
            text = self._api.logs(self._id, tail=lines).decode("utf-8", "replace").strip()
        except api_error:
            text = ""
        return text or "(no output)"

    # -- KernelHost --

    @property
    def client(self) -> BlockingKernelClient:
        if self._client is None:
            raise SandboxError(f"{self.spec.case_id}: sandbox not started")
        return self._client

    def alive(self) -> bool:
        return not self._closed and self._id is not None and bool(self._state().get("Running"))

    def exit_code(self) -> int | None:
        state = self._state()
        return None if not state or state.get("Running") else state.get("ExitCode")

    def interrupt(self) -> None:
        api_error, _, _ = _api_error()
        try:
            self._api.kill(self._id, signal="SIGINT")  # docker-init forwards it to the kernel
        except api_error:
            pass

    def hard_kill(self) -> None:
        api_error, _, _ = _api_error()
        with self._lock:
            if self._id is None:
                return
            try:
                self._api.kill(self._id, signal="SIGKILL")
            except api_error:
                pass  # not running (409) or gone
            deadline = time.monotonic() + STOP_WAIT_S
            while self._state().get("Running") and time.monotonic() < deadline:
                time.sleep(0.05)
            self._init_pid = self._kernel_pid = None

    def restart(self) -> None:
        """A fresh container: Docker keeps State.OOMKilled set across `docker start`, so a
        restarted one would report every later death as OOM."""
        _, _, docker_error = _api_error()
        self.hard_kill()
        with self._lock:
            try:
                self._api.remove_container(self._id, force=True)
                self._id = self._docker.containers.create(**self._config).id
            except docker_error as exc:
                raise SandboxError(f"{self.spec.case_id}: docker could not recreate the container: {exc}") from None
        self.launch()

    def oom_killed(self) -> bool:
        return bool(self._state().get("OOMKilled"))

    def _pids_max_count(self) -> int:
        return local._counter(self._pids_events, "max") if self._pids_events else 0

    def contain(self, sweep: bool = False) -> int:
        """After the pids limit was hit (a fork bomb), kill every process but init and kernel.

        The container's processes are visible from the host: the local backend's sweep
        applies unchanged, with docker-init as the namespace's init."""
        if not self._kernel_pid or not self._init_pid:
            return 0
        hits = self._pids_max_count()
        hit, self._pids_max_base = hits > self._pids_max_base, hits
        if not (hit or sweep):
            return 0
        return local.kill_strays(self._init_pid, self._kernel_pid, self._client)

    # -- Sandbox --

    def execute(self, code: str) -> Observation:
        return kernel.run_cell_unless_closed(self, code, self.spec.limits, lambda: self._closed)

    def close(self) -> None:
        _, _, docker_error = _api_error()
        self._closed = True
        with self._lock:
            if self._id is not None:
                if self._client is not None and self._state().get("Running"):
                    kernel.shutdown(self._client)
                    deadline = time.monotonic() + CLOSE_WAIT_S
                    while self._state().get("Running") and time.monotonic() < deadline:
                        time.sleep(0.05)
                try:
                    self._api.remove_container(self._id, force=True)
                except docker_error:
                    pass
                self._id = None
            if self._client is not None:
                self._client.stop_channels()
                self._client = None
            shutil.rmtree(self.box, ignore_errors=True)


def _pids_events_file(host_pid: int) -> Path | None:
    """The pids cgroup (v1) of a host process: where the limit-hit counter is."""
    try:
        for line in Path(f"/proc/{host_pid}/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            if "pids" in names.split(","):
                events = local.CGROUP_MOUNT / "pids" / path.strip("/") / "pids.events"
                return events if events.exists() else None
    except OSError:
        pass
    return None


class DockerBackend(Backend):
    name = "docker"

    def __init__(self, image: str | None = None, state_dir: Path = STATE_DIR) -> None:
        self.image = image or image_tag()
        self.state_dir = state_dir
        self._docker = None
        self._image_id: str | None = None
        self._server: str | None = None

    def _client(self):
        if self._docker is None:
            self._docker = _docker_client()
        return self._docker

    def available(self) -> tuple[bool, str]:
        api_error, not_found, docker_error = _api_error()
        try:
            client = self._client()
            self._server = client.version().get("Version", "?")
        except (docker_error, OSError) as exc:
            self._docker = None
            return False, f"the Docker daemon does not answer ({exc}); run `make docker`"
        try:
            self._image_id = client.api.inspect_image(self.image)["Id"]
        except not_found:
            return False, f"image {self.image} is not built (run `make image`)"
        except api_error as exc:
            return False, f"cannot inspect image {self.image}: {exc}"
        return True, f"docker {self._server}; image {self.image} ({self._image_id})"

    def describe(self) -> dict:
        ok, why = self.available()
        return {"name": self.name, "available": ok, "detail": why, "image": self.image,
                "image_id": self._image_id, "docker_server": self._server}

    def start(self, spec: SandboxSpec) -> DockerSandbox:
        ok, why = (True, "") if self._image_id else self.available()
        if not ok:
            raise SandboxError(f"{spec.case_id}: docker sandbox unavailable: {why}")
        _, _, docker_error = _api_error()
        box = DockerSandbox(spec, self._client(), self.image, self.state_dir)
        try:
            box.create()
            box.launch()
        except (OSError, docker_error) as exc:
            box.close()
            raise SandboxError(f"{spec.case_id}: docker sandbox setup failed: {exc}") from exc
        except BaseException:
            box.close()
            raise
        return box

    def collect_stale(self) -> int:
        """Remove containers and socket dirs whose controller process is gone."""
        _, _, docker_error = _api_error()
        removed = 0
        try:
            containers = self._client().api.containers(all=True, filters={"label": f"{LABEL}.controller"})
        except (docker_error, OSError):
            containers = []
        for c in containers:
            labels = c.get("Labels") or {}
            pid, start = labels.get(f"{LABEL}.controller", ""), labels.get(f"{LABEL}.controller_start", "")
            if pid.isdigit() and start.isdigit() and local._same_process(int(pid), int(start)):
                continue
            try:
                self._client().api.remove_container(c["Id"], force=True)
            except docker_error:
                continue
            removed += 1
        if self.state_dir.is_dir():
            for box in self.state_dir.iterdir():
                pid = box.name.split("-", 1)[0]
                if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                    shutil.rmtree(box, ignore_errors=True)
        return removed
