"""The container of a docker sandbox, as `containers.create` keyword arguments (pure: unit-testable).

Container settings: --network none, read-only root, tmpfs /tmp and /dev/shm, cap-drop ALL,
no-new-privileges, --init (docker-init is pid 1 and forwards signals to the kernel, pid 2),
non-root user 65534, memory with memory+swap equal, pids and CPU limits, BLAS threads pinned.
Only the instance's inputs are bind-mounted (read-only, /input/<rel>), the workspace
read-write at /workspace and a per-sandbox socket dir at /kernel: the kernel talks ZeroMQ ipc
through unix sockets there, so no network is needed between controller and kernel.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from runner.sandbox.base import SandboxSpec
from runner.sandbox.layout import (
    INSIDE_SOCKET_DIR,
    SANDBOX_UID,
    WORKSPACE,
    input_mounts,
    jit_cache_mount,
    kernel_env,
    library_mounts,
)

KERNEL_PYTHON = "/opt/venv/bin/python"  # the image's virtualenv (kernel_image/Dockerfile)
LABEL = "eegbench"  # label prefix


def container_env(spec: SandboxSpec) -> dict[str, str]:
    """The kernel environment every backend sets, with the image's interpreter on PATH."""
    return kernel_env(spec, KERNEL_PYTHON)


def sandbox_user() -> str:
    """uid:gid of the kernel. A root controller hands the workspace and socket dir to the
    unprivileged sandbox uid; any other controller (a docker-group member) cannot chown, so
    the kernel runs as the controller's own unprivileged uid and can write what it owns."""
    if os.geteuid() == 0:
        return f"{SANDBOX_UID}:{SANDBOX_UID}"
    return f"{os.geteuid()}:{os.getegid()}"


def container_config(spec: SandboxSpec, image: str, sock: Path, labels: dict[str, str],
                     command: list[str]) -> dict[str, Any]:
    """Keyword arguments of `containers.create` for one sandbox (pure: unit-testable)."""
    from docker.types import Mount

    limits = spec.limits
    memory = f"{limits.memory_mb}m"
    tmpfs_opts = f"rw,nosuid,nodev,size={limits.memory_mb}m,mode=1777"
    read_only = input_mounts(spec) + library_mounts(spec)
    mounts = [Mount(inside, str(host), type="bind", read_only=True) for host, inside in read_only]
    mounts += [Mount(inside, str(host), type="bind", read_only=ro) for host, inside, ro in jit_cache_mount(spec)]
    mounts += [
        Mount(WORKSPACE, os.path.abspath(spec.workspace), type="bind", read_only=False),
        Mount(INSIDE_SOCKET_DIR, str(sock), type="bind", read_only=False),
    ]
    return {
        "image": image,
        "command": command,
        "user": sandbox_user(),
        "working_dir": WORKSPACE,
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
