"""One cell in, one Observation out: the execution policy every backend shares.

Merged output (stdout, stderr, results, tracebacks) under a head+tail budget, an explicit
message for a silent success, and the recovery ladder: timeout -> interrupt -> grace -> hard
kill + restart; a kernel death or OOM kill is reported as such and the kernel restarted.
The backend provides the processes through kernel.KernelHost.
"""
from __future__ import annotations

import os
import re
import signal
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import zmq
from jupyter_client.blocking.client import BlockingKernelClient

from runner.core.transcript import ExecStatus, Observation
from runner.sandbox import procfs
from runner.sandbox.base import Limits, SandboxError
from runner.sandbox.bootstrap import CUT_SENTINEL_RE
from runner.sandbox.kernel import POLL_S, KernelHost

IOPUB_SETTLE_S = 1.0  # after the reply, how long to wait for a late or dropped "idle"
ALIVE_CHECK_S = 0.25
ERROR_VALUE_CHARS = 1000  # Observation.error_value is a label, not the output

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[@-_]")
NO_OUTPUT = "[Execution finished successfully with no output.]"
STATE_LOST = (
    "all variables, imports and other in-memory state are lost; files in /workspace are kept."
)

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
        """Count a chunk; keep what falls in the head or may end up in the tail."""
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
    """An exception's value as Observation.error_value: cut marks made readable, bounded."""
    if value is None:
        return None
    value = CUT_SENTINEL_RE.sub(lambda m: f"[... {m.group(1)} characters cut ...]", value)
    return value if len(value) <= ERROR_VALUE_CHARS else value[:ERROR_VALUE_CHARS] + " [...]"


def strip_ansi(text: str) -> str:
    """Remove terminal escapes (IPython colours its tracebacks)."""
    return ANSI_RE.sub("", text)


def output_text(msg: dict[str, Any]) -> str:
    """The text one iopub message contributes to the observation ('' for none)."""
    kind, content = msg["msg_type"], msg["content"]
    if kind == "stream":
        stream: str = content.get("text", "")
        return stream
    if kind in ("execute_result", "display_data"):
        text: str = content.get("data", {}).get("text/plain", "")
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
        self.reply: dict[str, Any] | None = None
        self.idle = False
        self.error_name: str | None = None
        self.error_value: str | None = None
        self.last_iopub = time.monotonic()
        self.reply_at: float | None = None
        self.strays_killed = 0

    def take_iopub(self, msg: dict[str, Any]) -> None:
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

    def take_shell(self, msg: dict[str, Any]) -> None:
        if msg["parent_header"].get("msg_id") == self.msg_id and msg["msg_type"] == "execute_reply":
            self.reply = msg["content"]
            self.reply_at = time.monotonic()

    def done(self) -> bool:
        if self.reply is None or self.reply_at is None:
            return False
        # iopub is PUB/SUB and may drop under a flood; do not wait forever for "idle". The
        # settle time counts from the reply too: a cell that computed for seconds before
        # printing published nothing meanwhile, and its output may trail the reply.
        return self.idle or time.monotonic() - max(self.last_iopub, self.reply_at) > IOPUB_SETTLE_S


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


def run_cell_unless_closed(host: KernelHost, code: str, limits: Limits, closed: Callable[[], bool]) -> Observation:
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
    usage = _CpuUsage(host.kernel_pid)
    outcome = _pump(host, cell, started + limits.exec_timeout_s)
    usage.stop()  # before the recovery ladder: what the cell got until it ended or timed out
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
    return _observation(cell, status, started, notes, restarted).model_copy(
        update={"cpu_s": usage.cpu_s, "host_load": usage.host_load})


class _CpuUsage:
    """The kernel's CPU seconds over one execution, and the host's load when it ended: an
    execution that timed out on a starved host is told apart from one that was slow itself."""

    def __init__(self, pid: int | None) -> None:
        self.pid, self.start = pid, procfs.cpu_seconds(pid)
        self.cpu_s: float | None = None
        self.host_load: float | None = None

    def stop(self) -> None:
        end = procfs.cpu_seconds(self.pid)
        if self.start is not None and end is not None:
            self.cpu_s = round(end - self.start, 3)
        self.host_load = round(os.getloadavg()[0] / (os.cpu_count() or 1), 3)


def _status_from_reply(cell: _Cell) -> ExecStatus:
    reply = cell.reply or {}
    if reply.get("status") == "ok":
        return "ok"
    cell.error_name = cell.error_name or reply.get("ename")
    cell.error_value = cell.error_value or error_label(reply.get("evalue"))
    return "oom" if cell.error_name == "MemoryError" else "error"


def _after_death(host: KernelHost, limits: Limits, notes: list[str]) -> tuple[ExecStatus, bool]:
    if host.oom_killed():
        return _restarted(host, "oom", _oom_killed(limits), notes)
    return _restarted(host, "died", f"The kernel process died during this cell ({_exit_reason(host.exit_code())})",
                      notes)


def _oom_killed(limits: Limits) -> str:
    return f"The kernel was killed because the cell exceeded the memory limit ({limits.memory_mb} MB)"


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
    timed_out = f"Execution timed out after {limits.exec_timeout_s:g} s"
    if host.oom_killed():  # on a loaded host the kernel can reclaim for seconds before the OOM kill
        return _restarted(host, "oom", f"{timed_out}. {_oom_killed(limits)}", notes)
    if outcome == "died":
        return _restarted(host, "timeout", f"{timed_out}; the kernel died when interrupted", notes)
    return _restarted(host, "timeout", f"{timed_out} and did not stop within {limits.grace_s:g} s of an "
                      "interrupt, so the kernel was killed", notes)


def _restarted(host: KernelHost, status: ExecStatus, what: str, notes: list[str]) -> tuple[ExecStatus, bool]:
    """Restart after `what` happened: (status, True), or an infra_error if the restart failed."""
    ok, note = _restart(host, what)
    notes.append(note)
    return (status, True) if ok else ("infra_error", False)


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

