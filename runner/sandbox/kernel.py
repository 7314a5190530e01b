"""Talk to a sandboxed ipykernel over ZeroMQ ipc: connection files, connecting, readiness.

Backend-independent: a backend (bubblewrap, Docker) owns the processes and implements
`KernelHost`; this module owns the wire protocol, runner/sandbox/cell.py the execution policy.

Why ipc: the kernel lives in its own network namespace, so TCP on loopback cannot cross;
unix sockets in a directory bind-mounted into the sandbox can. The kernel's connection file
names the in-sandbox directory, the controller's names the host directory, same key.
"""
from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from queue import Empty
from typing import Protocol

import zmq
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.connect import KernelConnectionInfo

from runner.sandbox.base import SandboxError

SOCKET_BASENAME = "k"  # ipykernel binds "<ip>-<port>" for the ipc transport
PORTS = {"shell_port": 1, "iopub_port": 2, "stdin_port": 3, "control_port": 4, "hb_port": 5}
MAX_SOCKET_PATH = 107  # sun_path is 108 bytes including the terminating NUL
KERNEL_CONNECTION_FILE = "kernel.json"

READY_TIMEOUT_S = 30.0
POLL_S = 0.1
PROBE_S = 0.05  # readiness: interval between iopub probes


class KernelHost(Protocol):
    """What the execute logic needs from a backend's running kernel."""

    @property
    def client(self) -> BlockingKernelClient:
        """The connected kernel client (SandboxError when not started)."""

    @property
    def kernel_pid(self) -> int | None:
        """The kernel's host pid while it runs (None when unknown)."""

    def alive(self) -> bool:
        """Whether the kernel process is running."""

    def interrupt(self) -> None:
        """Interrupt the running cell."""

    def hard_kill(self) -> None:
        """Kill the kernel and everything of the sandbox's."""

    def restart(self) -> None:
        """Start a fresh kernel after hard_kill (or death) and wait until it answers."""

    def oom_killed(self) -> bool:
        """Whether the current (or just-died) kernel process was killed for memory."""

    def exit_code(self) -> int | None:
        """The dead kernel's exit code (None while it runs or when unknown)."""

    def contain(self, sweep: bool = False) -> int:
        """Kill stray processes if the process limit was hit since the last call (or at once
        when `sweep`: the cell already hit it); return how many.

        Called while a cell runs and after it: a fork bomb's copies of the kernel would
        otherwise starve the kernel of CPU until the timeout."""


# --- connection files -----------------------------------------------------------------


def socket_dir_ok(host_dir: str | Path, inside_dir: str) -> None:
    """Raise SandboxError when a socket path would not fit in sun_path on either side."""
    longest = max(len(str(host_dir)), len(inside_dir)) + len(f"/{SOCKET_BASENAME}-00")
    if longest >= MAX_SOCKET_PATH:
        raise SandboxError(
            f"kernel socket path too long ({longest} >= {MAX_SOCKET_PATH} bytes): {host_dir}"
        )


def connection_info(socket_dir: str | Path, key: str) -> KernelConnectionInfo:
    """A connection file's content: ipc sockets named after `socket_dir`, signed with `key`."""
    return {
        "transport": "ipc",
        "ip": f"{socket_dir}/{SOCKET_BASENAME}",
        "key": key,
        "signature_scheme": "hmac-sha256",
        "kernel_name": "python3",
        "shell_port": PORTS["shell_port"],
        "iopub_port": PORTS["iopub_port"],
        "stdin_port": PORTS["stdin_port"],
        "control_port": PORTS["control_port"],
        "hb_port": PORTS["hb_port"],
    }


def new_key() -> str:
    """A fresh HMAC key for one sandbox's messages."""
    return secrets.token_hex(32)


def write_kernel_connection_file(host_dir: Path, inside_dir: str, key: str) -> str:
    """Write the kernel-side connection file into the shared dir; return its in-sandbox path."""
    path = host_dir / KERNEL_CONNECTION_FILE
    path.write_text(json.dumps(connection_info(inside_dir, key)))
    path.chmod(0o644)
    return f"{inside_dir}/{KERNEL_CONNECTION_FILE}"


def remove_socket_files(host_dir: Path) -> None:
    """Stale socket files from a killed kernel; zmq would replace them, but be explicit."""
    for port in PORTS.values():
        try:
            (host_dir / f"{SOCKET_BASENAME}-{port}").unlink()
        except FileNotFoundError:
            pass


# --- connecting -----------------------------------------------------------------------


def connect(host_dir: Path, key: str) -> BlockingKernelClient:
    """A client on the kernel's sockets in host_dir: shell, iopub and control channels only."""
    # The shared context avoids one zmq IO thread per client (one per restart otherwise).
    client = BlockingKernelClient(context=zmq.Context.instance())
    client.load_connection_info(connection_info(host_dir, key))
    # No heartbeat: jupyter_client's heartbeat channel misreports a restarted kernel as dead;
    # liveness comes from the backend's process state instead. No stdin: input() must fail.
    client.start_channels(shell=True, iopub=True, stdin=False, hb=False, control=True)
    return client


def wait_ready(host: KernelHost, timeout_s: float | None = None) -> None:
    """Block until the kernel answers on shell and publishes on iopub; SandboxError otherwise.

    A kernel_info reply proves the shell socket; a silent empty execution whose "idle"
    arrives on iopub proves the subscription is live, so the first real cell loses nothing.
    """
    timeout_s = READY_TIMEOUT_S if timeout_s is None else timeout_s
    deadline = time.monotonic() + timeout_s
    client = host.client
    info_id = client.kernel_info()
    while not _await_reply(host, client, info_id, deadline):
        if not host.alive():
            raise SandboxError(f"kernel exited before answering (exit code {host.exit_code()})")
        if time.monotonic() >= deadline:
            raise SandboxError(f"kernel did not answer within {timeout_s:.0f} s")
        info_id = client.kernel_info()
    probes: set[str] = set()
    while True:
        # Until the subscription is live, "idle" messages are lost: probe again every
        # PROBE_S and accept the first probe whose "idle" arrives.
        probes.add(client.execute("", silent=True, store_history=False, allow_stdin=False))
        if _await_idle(client, probes, min(deadline, time.monotonic() + PROBE_S)):
            return
        if time.monotonic() >= deadline:
            raise SandboxError(f"kernel output channel not ready within {timeout_s:.0f} s")


def _await_reply(host: KernelHost, client: BlockingKernelClient, msg_id: str, deadline: float) -> bool:
    retry_at = min(deadline, time.monotonic() + 1.0)
    while time.monotonic() < retry_at:
        try:
            msg = client.shell_channel.get_msg(timeout=POLL_S)
        except Empty:
            if not host.alive():
                return False
            continue
        if msg["parent_header"].get("msg_id") == msg_id:
            return True
    return False


def _await_idle(client: BlockingKernelClient, msg_ids: set[str], deadline: float) -> bool:
    while time.monotonic() < deadline:
        try:
            msg = client.iopub_channel.get_msg(timeout=min(POLL_S, max(0.0, deadline - time.monotonic())))
        except Empty:
            continue
        if (
            msg["parent_header"].get("msg_id") in msg_ids
            and msg["msg_type"] == "status"
            and msg["content"].get("execution_state") == "idle"
        ):
            return True
    return False


# --- requests besides cells -----------------------------------------------------------


def shutdown(client: BlockingKernelClient) -> None:
    """Ask the kernel to exit (best effort; the backend kills whatever remains)."""
    try:
        client.shutdown()
    except (zmq.ZMQError, AssertionError):  # channel already closed
        pass


def reap_children(client: BlockingKernelClient, pids: list[int]) -> None:
    """Have the kernel reap children the backend killed (pids as the kernel sees them).

    Python never waits for a forked child, so each killed one stays a zombie holding a slot of
    the process limit. Queued as a silent request: it runs after the current cell, binds
    nothing in the user namespace, and its messages are ignored by the cell collector.
    """
    loop = f"import os\nfor p in {list(pids)!r}:\n    try:\n        os.waitpid(p, 0)\n    except OSError:\n        pass"
    code = f"exec({loop!r}, {{}})"
    client.execute(code, silent=True, store_history=False, allow_stdin=False, stop_on_error=False)


def request_interrupt(client: BlockingKernelClient) -> None:
    """Interrupt through the control channel, for backends that cannot signal the process."""
    msg = client.session.msg("interrupt_request", {})
    client.control_channel.send(msg)
