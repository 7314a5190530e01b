"""Talk to a sandboxed ipykernel over ZeroMQ ipc and turn one cell into one Observation.

Backend-independent: a backend (bubblewrap, Docker) owns the processes and implements
`KernelHost`; this module owns the wire protocol and the execution policy that DESIGN.md
fixes for every backend (merged output, success message, head+tail truncation, timeout ->
interrupt -> grace -> hard kill + restart, death and OOM reported as such).

Why ipc: the kernel lives in its own network namespace, so TCP on loopback cannot cross;
unix sockets in a directory bind-mounted into the sandbox can. The kernel's connection file
names the in-sandbox directory, the controller's names the host directory, same key.
"""
from __future__ import annotations

import json
import re
import secrets
import signal
import time
from collections import deque
from pathlib import Path
from queue import Empty
from typing import Protocol

import zmq
from jupyter_client.blocking.client import BlockingKernelClient

from runner.sandbox.base import Limits, SandboxError
from runner.transcript import ExecStatus, Observation

SOCKET_BASENAME = "k"  # ipykernel binds "<ip>-<port>" for the ipc transport
PORTS = {"shell_port": 1, "iopub_port": 2, "stdin_port": 3, "control_port": 4, "hb_port": 5}
MAX_SOCKET_PATH = 107  # sun_path is 108 bytes including the terminating NUL
KERNEL_CONNECTION_FILE = "kernel.json"

READY_TIMEOUT_S = 30.0
POLL_S = 0.1
PROBE_S = 0.05  # readiness: interval between iopub probes
IOPUB_SETTLE_S = 1.0  # after the reply, how long to wait for a late or dropped "idle"
ALIVE_CHECK_S = 0.25

# Kernel side, every outbound text is capped at MESSAGE_CAP_CHARS (head and tail kept, the
# middle replaced by this sentinel with the number of characters dropped): a 50 MB print
# must not arrive as one 50 MB message that the controller would hold whole.
MESSAGE_CAP_CHARS = 1_000_000
CUT_SENTINEL_RE = re.compile("\x00eegbench-cut:([0-9]+)\x00")
ERROR_VALUE_CHARS = 1000  # Observation.error_value is a label, not the output

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[@-_]")
NO_OUTPUT = "[Execution finished successfully with no output.]"
STATE_LOST = (
    "all variables, imports and other in-memory state are lost; files in /workspace are kept."
)


class KernelHost(Protocol):
    """What the execute logic needs from a backend's running kernel."""

    @property
    def client(self) -> BlockingKernelClient: ...

    def alive(self) -> bool: ...

    def interrupt(self) -> None: ...

    def hard_kill(self) -> None: ...

    def restart(self) -> None:
        """Start a fresh kernel after hard_kill (or death) and wait until it answers."""

    def oom_killed(self) -> bool:
        """Whether the current (or just-died) kernel process was killed for memory."""

    def exit_code(self) -> int | None: ...

    def contain(self, sweep: bool = False) -> int:
        """Kill stray processes if the process limit was hit since the last call (or at once
        when `sweep`: the cell already hit it); return how many.

        Called while a cell runs and after it: a fork bomb's copies of the kernel would
        otherwise starve the kernel of CPU until the timeout."""


# --- kernel command -------------------------------------------------------------------

# What `python -m ipykernel_launcher` does, preceded by one patch: Session.serialize caps the
# text of outbound output messages and drops rich mimetypes (only text/plain is observed).
KERNEL_BOOTSTRAP = r"""
import sys
from jupyter_client.session import Session


def _install_output_cap(cap):
    half = cap // 2

    def cut(text):
        if not isinstance(text, str) or len(text) <= cap:
            return text
        return text[:half] + "\0eegbench-cut:%d\0" % (len(text) - 2 * half) + text[-half:]

    def capped(msg_type, content):
        if msg_type == "stream":
            return dict(content, text=cut(content.get("text")))
        if msg_type in ("execute_result", "display_data", "update_display_data"):
            data = content.get("data") or {}
            return dict(content, data={"text/plain": cut(data["text/plain"])} if "text/plain" in data else {})
        if msg_type == "error" or (msg_type == "execute_reply" and content.get("status") == "error"):
            return dict(content, evalue=cut(content.get("evalue")),
                        traceback=[cut(line) for line in content.get("traceback") or []])
        return content

    original = Session.serialize

    def serialize(self, msg, *args, **kwargs):
        # Every outbound message passes here complete (execute_result's data is filled in
        # after Session.msg built it).
        if isinstance(msg.get("content"), dict):
            msg = dict(msg, content=capped(msg["header"]["msg_type"], msg["content"]))
        return original(self, msg, *args, **kwargs)

    Session.serialize = serialize


_install_output_cap(int(sys.argv.pop(1)))
if sys.path and sys.path[0] in ("", "."):
    del sys.path[0]  # as ipykernel_launcher: the cwd must not shadow packages
from ipykernel import kernelapp

kernelapp.launch_new_instance()
"""


def kernel_argv(python: str, connection_file: str, budget_chars: int) -> list[str]:
    """The kernel command line (inside the sandbox) for any backend."""
    cap = max(MESSAGE_CAP_CHARS, 4 * budget_chars)  # the cap must keep more than the budget
    return [python, "-c", KERNEL_BOOTSTRAP, str(cap), "-f", connection_file,
            "--HistoryManager.hist_file=:memory:"]


# --- connection files -----------------------------------------------------------------


def socket_dir_ok(host_dir: str | Path, inside_dir: str) -> None:
    """Raise SandboxError when a socket path would not fit in sun_path on either side."""
    longest = max(len(str(host_dir)), len(inside_dir)) + len(f"/{SOCKET_BASENAME}-00")
    if longest >= MAX_SOCKET_PATH:
        raise SandboxError(
            f"kernel socket path too long ({longest} >= {MAX_SOCKET_PATH} bytes): {host_dir}"
        )


def connection_info(socket_dir: str | Path, key: str) -> dict:
    return {
        "transport": "ipc",
        "ip": f"{socket_dir}/{SOCKET_BASENAME}",
        "key": key,
        "signature_scheme": "hmac-sha256",
        "kernel_name": "python3",
        **PORTS,
    }


def new_key() -> str:
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


def connect(host_dir: Path, key: str) -> BlockingKernelClient:
    # The shared context avoids one zmq IO thread per client (one per restart otherwise).
    client = BlockingKernelClient(context=zmq.Context.instance())
    client.load_connection_info(connection_info(host_dir, key))
    # No heartbeat: jupyter_client's heartbeat misreports death after restarts (DESIGN.md);
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


# --- output collection ----------------------------------------------------------------


class OutputBuffer:
    """Keeps the first and last budget/2 characters of a stream; memory stays O(budget)."""

    def __init__(self, budget: int) -> None:
        self.head_cap = budget // 2
        self.tail_cap = budget - self.head_cap
        self.head: list[str] = []
        self.head_len = 0
        self.tail: deque[str] = deque()
        self.tail_len = 0
        self.total = 0

    def skip(self, count: int) -> None:
        """Characters dropped before they arrived (kernel-side cap): counted as cut."""
        self.total += count

    def add(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        room = self.head_cap - self.head_len
        if room > 0:
            self.head.append(text[:room])
            self.head_len += min(room, len(text))
            text = text[room:]
        if not text:
            return
        self.tail.append(text[-self.tail_cap :] if self.tail_cap else "")
        self.tail_len += len(self.tail[-1])
        # Drop whole chunks from the left while what remains still covers the tail.
        while self.tail and self.tail_len - len(self.tail[0]) >= self.tail_cap:
            self.tail_len -= len(self.tail.popleft())

    def render(self) -> tuple[str, int]:
        """(text, characters cut)."""
        head = "".join(self.head)
        tail = "".join(self.tail)
        kept_tail = tail[-self.tail_cap :] if self.tail_cap else ""
        cut = self.total - len(head) - len(kept_tail)
        if cut <= 0:
            return head + tail, 0
        marker = f"\n[... {cut} characters of output cut here (kept the first {len(head)} and the last {len(kept_tail)}) ...]\n"
        return head + marker + kept_tail, cut


def error_label(value: str | None) -> str | None:
    if value is None:
        return None
    value = CUT_SENTINEL_RE.sub(lambda m: f"[... {m.group(1)} characters cut ...]", value)
    return value if len(value) <= ERROR_VALUE_CHARS else value[:ERROR_VALUE_CHARS] + " [...]"


def strip_ansi(text: str) -> str:
    return ANSI_RE.sub("", text)


def output_text(msg: dict) -> str:
    """The text one iopub message contributes to the observation ('' for none)."""
    kind, content = msg["msg_type"], msg["content"]
    if kind == "stream":
        return content.get("text", "")
    if kind in ("execute_result", "display_data"):
        text = content.get("data", {}).get("text/plain", "")
        return text + "\n" if text and not text.endswith("\n") else text
    if kind == "error":
        return "\n".join(content.get("traceback", [])) + "\n"
    return ""


# --- one cell -------------------------------------------------------------------------


class _Cell:
    """Progress of one execution request: what arrived so far."""

    def __init__(self, msg_id: str, budget: int) -> None:
        self.msg_id = msg_id
        self.out = OutputBuffer(budget)
        self.reply: dict | None = None
        self.idle = False
        self.error_name: str | None = None
        self.error_value: str | None = None
        self.last_iopub = time.monotonic()
        self.strays_killed = 0

    def take_iopub(self, msg: dict) -> None:
        if msg["parent_header"].get("msg_id") != self.msg_id:
            return  # left over from an earlier, interrupted cell or the readiness probe
        self.last_iopub = time.monotonic()
        if msg["msg_type"] == "status":
            self.idle = msg["content"].get("execution_state") == "idle"
            return
        if msg["msg_type"] == "error":
            self.error_name = msg["content"].get("ename")
            self.error_value = error_label(msg["content"].get("evalue"))
        self.add_text(strip_ansi(output_text(msg)))

    def add_text(self, text: str) -> None:
        pos = 0
        for cut in CUT_SENTINEL_RE.finditer(text):
            self.out.add(text[pos : cut.start()])
            self.out.skip(int(cut.group(1)))
            pos = cut.end()
        self.out.add(text[pos:])

    def take_shell(self, msg: dict) -> None:
        if msg["parent_header"].get("msg_id") == self.msg_id and msg["msg_type"] == "execute_reply":
            self.reply = msg["content"]

    def done(self) -> bool:
        if self.reply is None:
            return False
        # iopub is PUB/SUB and may drop under a flood; do not wait forever for "idle".
        return self.idle or time.monotonic() - self.last_iopub > IOPUB_SETTLE_S


def _pump(host: KernelHost, cell: _Cell, deadline: float) -> str:
    """Collect messages until the cell is done, the kernel dies, or the deadline passes.

    Returns "done", "died" or "timeout".
    """
    client = host.client
    poller = zmq.Poller()
    poller.register(client.iopub_channel.socket, zmq.POLLIN)
    poller.register(client.shell_channel.socket, zmq.POLLIN)
    next_alive_check = time.monotonic() + ALIVE_CHECK_S
    while True:
        if cell.done():
            return "done"
        now = time.monotonic()
        if now >= deadline:
            return "timeout"
        if now >= next_alive_check:
            next_alive_check = now + ALIVE_CHECK_S
            if not host.alive():
                _drain(client, cell)
                return "died"
            cell.strays_killed += host.contain()
        ready = dict(poller.poll(timeout=int(1000 * min(POLL_S, deadline - now)) + 1))
        if client.iopub_channel.socket in ready:
            # Bounded batch so a flood of output cannot starve the deadline checks.
            for _ in range(200):
                if not client.iopub_channel.msg_ready():
                    break
                cell.take_iopub(client.iopub_channel.get_msg(timeout=0))
        if client.shell_channel.socket in ready:
            cell.take_shell(client.shell_channel.get_msg(timeout=0))


def _drain(client: BlockingKernelClient, cell: _Cell) -> None:
    """Keep whatever the dead kernel managed to publish before it died."""
    for _ in range(10_000):
        if not client.iopub_channel.msg_ready():
            return
        cell.take_iopub(client.iopub_channel.get_msg(timeout=0))


def run_cell_unless_closed(host: KernelHost, code: str, limits: Limits, closed) -> Observation:
    """run_cell, but a failure caused by a concurrent close() (the run is stopping) becomes an
    infra_error observation instead of an exception; any other failure propagates."""
    try:
        return run_cell(host, code, limits)
    except Exception as exc:  # only reachable when close() ran concurrently, or a zmq fault
        if not closed():
            raise
        return Observation(text=f"[Infrastructure error: the sandbox was closed ({exc!r})]",
                           status="infra_error", duration_s=0.0)


def run_cell(host: KernelHost, code: str, limits: Limits) -> Observation:
    """Execute one cell under the timeout and output budget; never raises for model errors."""
    started = time.monotonic()
    notes: list[str] = []
    if not host.alive():
        ok, note = _restart(host, "The kernel was not running before this cell (it had exited)")
        if not ok:
            return _observation(None, "infra_error", started, [note])
        notes.append(note)
    cell = _Cell(host.client.execute(code, store_history=True, allow_stdin=False, stop_on_error=False),
                 limits.output_budget_chars)
    outcome = _pump(host, cell, started + limits.exec_timeout_s)
    if outcome == "done":
        status, restarted = _status_from_reply(cell), False
        if status == "oom":
            notes.append(f"[The cell ran out of memory (limit {limits.memory_mb} MB); the kernel is still running.]")
    elif outcome == "died":
        status, restarted = _after_death(host, limits, notes)
    else:
        status, restarted = _after_timeout(host, cell, limits, notes)
    if host.alive():
        # A final sweep after a hit: the bomb may have forked again into the slots freed.
        cell.strays_killed += host.contain(sweep=cell.strays_killed > 0)
    if cell.strays_killed:
        notes.append(
            f"[The sandbox hit its process limit ({limits.pids}); {cell.strays_killed} stray child "
            "processes of the kernel were killed.]"
        )
    return _observation(cell, status, started, notes, restarted)


def _status_from_reply(cell: _Cell) -> ExecStatus:
    reply = cell.reply or {}
    if reply.get("status") == "ok":
        return "ok"
    cell.error_name = cell.error_name or reply.get("ename")
    cell.error_value = cell.error_value or error_label(reply.get("evalue"))
    return "oom" if cell.error_name == "MemoryError" else "error"


def _after_death(host: KernelHost, limits: Limits, notes: list[str]) -> tuple[ExecStatus, bool]:
    if host.oom_killed():
        what = (f"The kernel was killed because the cell exceeded the memory limit "
                f"({limits.memory_mb} MB)")
        status: ExecStatus = "oom"
    else:
        what = f"The kernel process died during this cell ({_exit_reason(host.exit_code())})"
        status = "died"
    ok, note = _restart(host, what)
    notes.append(note)
    return (status, True) if ok else ("infra_error", False)


def _exit_reason(code: int | None) -> str:
    """Backends report a signal death as 128+N (shell convention) or as -N (Popen)."""
    if code is None:
        return "cause unknown"
    number = code - 128 if code > 128 else -code if code < 0 else 0
    if number:
        try:
            return f"exit code {code}: killed by {signal.Signals(number).name}"
        except ValueError:
            return f"exit code {code}: killed by signal {number}"
    return f"exit code {code}"


def _after_timeout(host: KernelHost, cell: _Cell, limits: Limits, notes: list[str]) -> tuple[ExecStatus, bool]:
    host.interrupt()
    outcome = _pump(host, cell, time.monotonic() + limits.grace_s)
    if outcome == "done":
        notes.append(
            f"[Execution timed out after {limits.exec_timeout_s:g} s and was interrupted "
            "(KeyboardInterrupt). The kernel is still running and keeps its state.]"
        )
        return "timeout", False
    if outcome == "died":
        what = f"Execution timed out after {limits.exec_timeout_s:g} s; the kernel died when interrupted"
    else:
        what = (f"Execution timed out after {limits.exec_timeout_s:g} s and did not stop within "
                f"{limits.grace_s:g} s of an interrupt, so the kernel was killed")
    ok, note = _restart(host, what)
    notes.append(note)
    return ("timeout", True) if ok else ("infra_error", False)


def _restart(host: KernelHost, what: str) -> tuple[bool, str]:
    """Kill and restart the kernel; (restarted, note for the observation)."""
    host.hard_kill()
    try:
        host.restart()
    except SandboxError as exc:
        return False, f"[Infrastructure error: {what}, and restarting it failed: {exc}]"
    return True, f"[{what}. The kernel was restarted: {STATE_LOST}]"


def _observation(cell: _Cell | None, status: ExecStatus, started: float, notes: list[str],
                 restarted: bool = False) -> Observation:
    text, cut = cell.out.render() if cell else ("", 0)
    if not text and status == "ok" and not notes:
        text = NO_OUTPUT
    if notes:
        text = (text if not text or text.endswith("\n") else text + "\n") + "\n".join(notes)
    return Observation(
        text=text,
        status=status,
        duration_s=round(time.monotonic() - started, 4),
        error_name=cell.error_name if cell else None,
        error_value=cell.error_value if cell else None,
        restarted=restarted,
        truncated_chars=cut,
    )


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

