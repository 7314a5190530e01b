"""The controller end of the toolset: one tool call per kernel execution, through the sandbox.

Each call is sent as `braintools.serve('<request JSON>', max_chars)`: the model's tool name
and arguments travel as one string literal, so they are data, never code. The execution runs
under the CodeAct controls (timeout, interrupt, hard kill and restart); a restart empties
shared_state, and the result says so.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from braintools.protocol import RESULT_MARKER, SUMMARY_MARKER
from runner.core.transcript import Observation
from runner.sandbox.base import Sandbox

TAIL_CHARS = 600  # how much of a failed execution's output the agent sees


@dataclass(frozen=True)
class CallOutcome:
    """One tool call as the kernel ran it: the text the agent sees and what it made."""

    text: str
    ok: bool
    error_code: str | None
    registered: list[str] = field(default_factory=list)
    observation: Observation | None = None  # the raw execution, for the record
    response: dict[str, Any] | None = None


class KernelTools:
    """The toolset in one instance's kernel."""

    def __init__(self, sandbox: Sandbox, max_chars: int, summary_chars: int) -> None:
        self.sandbox = sandbox
        self.max_chars = max_chars
        self.summary_chars = summary_chars
        self.time_left: Callable[[], float | None] = lambda: None  # the loop sets the instance deadline's

    def call(self, tool: str, arguments: dict[str, Any] | str) -> CallOutcome:
        """Run one call (SandboxError when the sandbox itself fails)."""
        if isinstance(arguments, str):
            text = json.dumps({"error": {"code": "bad_argument", "argument": "arguments",
                                         "message": f"arguments: not a JSON object: {arguments[:200]!r}"}})
            return CallOutcome(text, False, "bad_argument")
        request = json.dumps({"tool": tool, "arguments": arguments}, ensure_ascii=False, default=str)
        obs = self.sandbox.execute(f"import braintools as _bt\n_bt.serve({request!r}, {self.max_chars})",
                                   timeout_s=self.time_left())
        response = _marker_json(obs.text, RESULT_MARKER)
        if not isinstance(response, dict):
            return _failed_execution(obs)
        error = response.get("error")
        text = json.dumps(response, ensure_ascii=False, separators=(",", ":"))
        code = error.get("code") if isinstance(error, dict) else None
        return CallOutcome(text, error is None, code, registered_ids(response), obs, response)

    def summary(self) -> tuple[str, Observation]:
        """The shared_state view shown before a planning round."""
        obs = self.sandbox.execute(f"import braintools as _bt\n_bt.summary({self.summary_chars})",
                                   timeout_s=self.time_left())
        value = _marker_json(obs.text, SUMMARY_MARKER)
        if isinstance(value, str):
            return value, obs
        return f"(shared_state unavailable: the kernel answered {obs.status}: {obs.text[-TAIL_CHARS:]})", obs


def registered_ids(response: dict[str, Any]) -> list[str]:
    """The ids a response's outputs were registered under."""
    return [str(v["id"]) for v in response.values() if isinstance(v, dict) and "id" in v]


def _marker_json(text: str, marker: str) -> Any:
    lines = [line for line in text.splitlines() if line.startswith(marker)]
    if not lines:
        return None
    try:
        return json.loads(lines[-1][len(marker):])
    except json.JSONDecodeError:
        return None


def _failed_execution(obs: Observation) -> CallOutcome:
    """No result line: the execution timed out, ran out of memory, died or raised."""
    code = {"timeout": "timeout", "oom": "out_of_memory", "died": "kernel_died"}.get(obs.status, "execution_error")
    detail = f"{obs.error_name}: {obs.error_value}" if obs.error_name else obs.text[-TAIL_CHARS:]
    message = f"the tool call ended with {obs.status} ({detail})"
    if obs.restarted:
        message += "; the kernel was restarted and shared_state is empty: every earlier id is gone"
    text = json.dumps({"error": {"code": code, "argument": None, "message": message}}, ensure_ascii=False)
    return CallOutcome(text, False, code, [], obs)
