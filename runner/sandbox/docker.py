"""The `docker` backend: one network-less container per instance running the kernel image.

Same contract as the local backend; the execution policy (timeout, interrupt, grace, hard
kill, restart, output budget) is cell.py's, shared by both.

The container's settings are container.py's (pure: unit-testable).

Liveness, exit code and OOM come from the container state. A kernel restart replaces the
container (same settings, same workspace): Docker keeps OOMKilled set across restarts.
Containers carry labels eegbench.run, eegbench.case and eegbench.controller (pid and start
time of the controller process); `collect_stale` removes those whose controller is gone.

Host-side state, one directory per sandbox (layout.state_dir: socket paths < 107 bytes):
    <STATE_DIR>/<controller pid>-<hex>/sock/   bind-mounted at /kernel: sockets + kernel.json
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, NamedTuple

from runner.sandbox import cgroupfs, cgroups, procfs, stale
from runner.sandbox.base import SandboxError, SandboxSpec
from runner.sandbox.container import KERNEL_PYTHON, LABEL, container_config
from runner.sandbox.image import image_tag
from runner.sandbox.kernel_sandbox import KernelBackend, KernelCommand, KernelSandbox
from runner.sandbox.layout import state_dir

STATE_DIR = state_dir("dkr")
STOP_WAIT_S = 10.0
API_TIMEOUT_S = 60


class _Errors(NamedTuple):
    api: type[Exception]
    not_found: type[Exception]
    docker: type[Exception]


def _errors() -> _Errors:
    import docker.errors  # imported lazily: only this backend needs the SDK

    return _Errors(docker.errors.APIError, docker.errors.NotFound, docker.errors.DockerException)


def _docker_client() -> Any:
    import docker  # imported lazily: only this backend needs the SDK

    return docker.from_env(timeout=API_TIMEOUT_S)


class DockerSandbox(KernelSandbox):
    """A container running the kernel image; its state comes from the daemon."""

    def __init__(self, spec: SandboxSpec, docker_client: Any, image: str, state_dir: Path,
                 kernel_command: KernelCommand) -> None:
        super().__init__(spec, state_dir, kernel_command)
        self.image = image
        self._docker = docker_client
        self._api = docker_client.api
        self._id: str | None = None
        self._made: list[str] = []  # every container this sandbox created (restarts add one)
        self._config: dict[str, Any] = {}
        self._pids_events: Path | None = None
        self._pids_max_base = 0

    @property
    def container_id(self) -> str | None:
        """The current container's id (None once closed)."""
        return self._id

    def labels(self) -> dict[str, str]:
        """What collect_stale and people reading `docker ps` learn from the container."""
        return {
            f"{LABEL}.run": self.spec.run_id,
            f"{LABEL}.case": self.spec.case_id,
            f"{LABEL}.controller": str(os.getpid()),
            f"{LABEL}.controller_start": str(procfs.start_time(os.getpid())),
            f"{LABEL}.uid": str(os.geteuid()),
            f"{LABEL}.box": str(self.box),
        }

    # -- setup --

    def _create(self) -> None:
        command = self._kernel_command(self.conn_inside, self.spec.limits)
        self._config = container_config(self.spec, self.image, self.sock, self.labels(), command)
        self._new_container()

    def _new_container(self) -> None:
        self._id = self._docker.containers.create(**self._config).id
        self._made.append(str(self._id))

    def _start_kernel(self) -> None:
        try:
            self._api.start(self._id)
        except _errors().api as exc:
            raise SandboxError(f"{self.spec.case_id}: docker start failed: {exc}") from None
        self._find_pids()

    def _after_ready(self) -> None:
        self._find_pids()  # the kernel may not have been forked by docker-init before
        # A (re)start makes a fresh pids cgroup: its limit-hit counter starts again.
        self._pids_events = cgroups.pids_events_file(self._init_pid) if self._init_pid else None
        self._pids_max_base = self._pids_max_count()

    def _state(self) -> dict[str, Any]:
        try:
            state: dict[str, Any] = self._api.inspect_container(self._id)["State"]
        except _errors().not_found:
            return {}
        return state

    def _find_pids(self) -> None:
        """docker-init's and the kernel's host pids (docker-init has exactly one child)."""
        init = self._state().get("Pid") or None
        self._init_pid = init
        kids = procfs.children(init) if init else []
        self._kernel_pid = kids[0] if kids else None

    def log_tail(self, lines: int = 40) -> str:
        """The container's last lines of output."""
        try:
            text = self._api.logs(self._id, tail=lines).decode("utf-8", "replace").strip()
        except _errors().api:
            text = ""
        return str(text) or "(no output)"

    # -- processes --

    def _running(self) -> bool:
        return self._id is not None and bool(self._state().get("Running"))

    def exit_code(self) -> int | None:
        """The container's exit code once it stopped."""
        state = self._state()
        return None if not state or state.get("Running") else state.get("ExitCode")

    def interrupt(self) -> None:
        """SIGINT to the container: docker-init forwards it to the kernel."""
        try:
            self._api.kill(self._id, signal="SIGINT")
        except _errors().api:
            pass

    def hard_kill(self) -> None:
        """SIGKILL the container and wait until the daemon sees it stopped."""
        with self._lock:
            if self._id is None:
                return
            try:
                self._api.kill(self._id, signal="SIGKILL")
            except _errors().api:
                pass  # not running (409) or gone
            deadline = time.monotonic() + STOP_WAIT_S
            while self._state().get("Running") and time.monotonic() < deadline:
                time.sleep(0.05)
            self._init_pid = self._kernel_pid = None

    def restart(self) -> None:
        """A fresh container: Docker keeps State.OOMKilled set across `docker start`, so a
        restarted one would report every later death as OOM."""
        self.hard_kill()
        with self._lock:
            try:
                self._api.remove_container(self._id, force=True)
                self._new_container()
            except _errors().docker as exc:
                raise SandboxError(f"{self.spec.case_id}: docker could not recreate the container: {exc}") from None
        self.launch()

    def _wait_exit(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while self._state().get("Running") and time.monotonic() < deadline:
            time.sleep(0.05)

    def _release(self) -> None:
        if self._id is None:
            return
        try:
            self._api.remove_container(self._id, force=True)
        except _errors().docker:
            pass
        self._id = None

    # -- limits --

    def oom_killed(self) -> bool:
        """The container state's OOMKilled (a fresh container per restart keeps it honest)."""
        return bool(self._state().get("OOMKilled"))

    def _pids_max_count(self) -> int:
        return cgroupfs.counter(self._pids_events, "max") if self._pids_events else 0

    def _pids_limit_hit(self) -> bool:
        # The container's processes are visible from the host: the local backend's sweep
        # applies unchanged, with docker-init as the namespace's init.
        hits = self._pids_max_count()
        hit, self._pids_max_base = hits > self._pids_max_base, hits
        return hit

    # -- inspection --

    def enforcement(self) -> dict[str, str]:
        """The container's cgroup for memory, pids and CPU; a loop-mounted workspace (root)."""
        workspace = "ext4 file system (loop mount)" if self.spec.limits.workspace_mb else ""
        return {"memory": "container", "pids": "container", "cpu": "container", "workspace": workspace}

    def host_pids(self) -> list[int]:
        """The container's pids cgroup's processes."""
        if self._pids_events is not None:
            return cgroupfs.members(self._pids_events.parent)
        return [self._init_pid, *procfs.descendants(self._init_pid)] if self._init_pid else []

    def leftovers(self) -> list[str]:
        """The state dir and every container this sandbox made, while they exist."""
        found = [str(self.box)] if self.box.exists() else []
        for container in self._made:
            try:
                self._api.inspect_container(container)
            except _errors().not_found:
                continue
            found.append(f"container {container[:12]}")
        return found


class DockerBackend(KernelBackend):
    """Sandboxes as containers of the kernel image, through the local Docker daemon."""

    name = "docker"

    def __init__(self, image: str | None = None, state_dir: Path = STATE_DIR) -> None:
        super().__init__(state_dir)
        self.image = image or image_tag()
        self._docker: Any = None
        self._image_id: str | None = None
        self._server: str | None = None

    def _client(self) -> Any:
        if self._docker is None:
            self._docker = _docker_client()
        return self._docker

    def available(self) -> tuple[bool, str]:
        """Whether the daemon answers and the kernel image is built (asked every time)."""
        errors = _errors()
        try:
            client = self._client()
            self._server = client.version().get("Version", "?")
        except (errors.docker, OSError) as exc:
            self._docker = None
            return False, f"the Docker daemon does not answer ({exc}); run `make docker`"
        try:
            self._image_id = client.api.inspect_image(self.image)["Id"]
        except errors.not_found:
            return False, f"image {self.image} is not built (run `make image`)"
        except errors.api as exc:
            return False, f"cannot inspect image {self.image}: {exc}"
        return True, f"docker {self._server}; image {self.image} ({self._image_id})"

    def describe(self) -> dict[str, Any]:
        """The base record plus the image, its id and the daemon's version."""
        ok, why = self.available()
        return {"name": self.name, "available": ok, "detail": why, "image": self.image,
                "image_id": self._image_id, "docker_server": self._server}

    def _usable(self) -> tuple[bool, str]:
        return (True, "") if self._image_id else self.available()

    def _setup_errors(self) -> tuple[type[BaseException], ...]:
        return (OSError, _errors().docker)

    def _new_sandbox(self, spec: SandboxSpec) -> DockerSandbox:
        return DockerSandbox(spec, self._client(), self.image, self.state_dir, self.kernel_command)

    def collect_stale(self) -> int:
        """Remove containers and socket dirs whose controller process is gone."""
        errors = _errors()
        removed = 0
        try:  # this user's only: another user's controller may have the same pid
            containers = self._client().api.containers(
                all=True, filters={"label": [f"{LABEL}.controller", f"{LABEL}.uid={os.geteuid()}"]})
        except (errors.docker, OSError):
            containers = []
        for c in containers:
            labels = c.get("Labels") or {}
            pid, start = labels.get(f"{LABEL}.controller", ""), labels.get(f"{LABEL}.controller_start", "")
            if pid.isdigit() and start.isdigit() and procfs.same_process(int(pid), int(start)):
                continue
            try:
                self._client().api.remove_container(c["Id"], force=True)
            except errors.docker:
                continue
            removed += 1
        stale.remove_dirs_of_dead_controllers(self.state_dir)
        return removed

    def kernel_python(self) -> str:
        """The image's virtualenv interpreter."""
        return KERNEL_PYTHON

    def own_state(self) -> set[str]:
        """This controller process's sandbox dirs and containers."""
        try:
            containers = self._client().api.containers(
                all=True, filters={"label": f"{LABEL}.controller={os.getpid()}"})
        except (_errors().docker, OSError):
            containers = []
        return super().own_state() | {f"container {c['Id'][:12]}" for c in containers}
