"""What happened in one instance, turn by turn: the audit record's building blocks."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

ExecStatus = Literal["ok", "error", "timeout", "oom", "died", "infra_error"]
# tool_call / final_answer: the tools paradigm (EEGAgentBench's JSON actions or native calls)
# decomposition / report: BrainAgent's supervisor plan and a subagent's report to it
ActionKind = Literal["execute", "solution", "none", "tool_call", "final_answer", "decomposition", "report"]
InstanceStatus = Literal[
    "solution",
    "forced_solution",
    "max_rounds",
    "repeated_failure",
    "missing_action",
    "max_tool_calls",  # tools paradigm: a tool call past the tool-call ceiling
    "deadline",
    "token_limit",  # the instance's tokens reached --max-instance-tokens: scored as produced
    "context_exceeded",  # the model's conversation outgrew the endpoint's context: scored as produced
    "refused",  # the endpoint's refusal or content filter ended the reply: scored as produced
    "request_rejected",  # another request error the model's turns caused (4xx): scored as produced
    "infra_error",
]

# Observation.host_overloaded: more runnable tasks than CPUs, and under half a CPU for the cell.
OVERLOAD_LOAD = 1.0
OVERLOAD_CPU_SHARE = 0.5


def starved(duration_s: float, cpu_s: float | None, host_load: float | None) -> bool:
    """The host ran more than one runnable task per CPU and the kernel got under half of the
    wall time as CPU: a timeout then may be the harness's failure (a starved machine), not
    the model's. Unknown CPU time or load is never counted."""
    if cpu_s is None or host_load is None:
        return False
    return host_load > OVERLOAD_LOAD and cpu_s < OVERLOAD_CPU_SHARE * duration_s

EventKind = Literal["model_retry", "model_wait", "kernel_restart", "sandbox_failure", "interrupted", "worker_lost"]


class InfraEvent(BaseModel):
    """Something that happened to the harness, not the model: a retried model call, a kernel
    restart, a sandbox failure, an interruption. Kept in the transcript for the audit."""

    kind: EventKind
    detail: str
    turn: int | None = None  # the turn it happened in, when there was one
    at_s: float | None = None  # seconds since the instance started


class Usage(BaseModel):
    """Token counts of one model reply; None when the endpoint did not report them."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None  # part of completion_tokens, when the endpoint says

    def total(self) -> int | None:
        """Prompt + completion tokens; None when the endpoint reported neither."""
        if self.prompt_tokens is None and self.completion_tokens is None:
            return None
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)


class Observation(BaseModel):
    """The result of one execution, as returned to the model (already truncated)."""

    text: str
    status: ExecStatus
    duration_s: float
    error_name: str | None = None  # exception class, e.g. "ZeroDivisionError"
    error_value: str | None = None
    restarted: bool = False  # the kernel was killed and restarted after this execution
    truncated_chars: int = 0  # characters removed by head+tail truncation
    # Up to the end of the execution, or to its timeout: the kernel's CPU seconds (None when
    # unknown, e.g. it died) and the host's 1-minute load average per CPU.
    cpu_s: float | None = None
    host_load: float | None = None

    def host_overloaded(self) -> bool:
        """A timeout that coincides with host overload (see `starved`)."""
        return self.status == "timeout" and starved(self.duration_s, self.cpu_s, self.host_load)


class ToolCallRecord(BaseModel):
    """One tool request of the tools paradigm and what came back (already truncated)."""

    name: str
    arguments: dict[str, Any] | str  # the parsed JSON object, or the raw text when it did not parse
    call_id: str | None = None  # native function calling's id
    status: Literal["ok", "error"]
    error_code: str | None = None  # ToolError code, e.g. "unknown_channel", "budget_exceeded"
    result: str  # the text returned to the model
    truncated_chars: int = 0
    duration_s: float = 0.0
    registered: list[str] = Field(default_factory=list)  # brainagent: shared_state ids the call made
    cpu_s: float | None = None  # brainagent: the kernel execution's, as in Observation
    host_load: float | None = None

    def host_overloaded(self) -> bool:
        """A tool call that timed out while the host was overloaded (see `starved`)."""
        return self.error_code == "timeout" and starved(self.duration_s, self.cpu_s, self.host_load)


class Turn(BaseModel):
    """One model reply and what the controller did with it (execution or tool calls)."""

    index: int
    reply: str  # the assistant's raw reply
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    action: ActionKind
    code: str | None = None
    code_sha256: str | None = None
    observation: Observation | None = None
    note: str | None = None  # controller remark: forced round, missing action, ...
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)  # tools and brainagent paradigms
    # brainagent: who replied ("supervisor" or a subagent's name), the objective it works on,
    # and the shared_state summary it was shown before this planning round
    role: str | None = None
    objective: str | None = None
    state_summary: str | None = None


def usage_by_role(turns: list[Turn]) -> dict[str, Usage]:
    """Token totals per role of the evaluated model (brainagent: the supervisor and each
    subagent; other paradigms: one role, "model"); None stays None only when no turn reported."""
    totals: dict[str, Usage] = {}
    for turn in turns:
        role = turn.role or "model"
        total = totals.setdefault(role, Usage())
        for name in ("prompt_tokens", "completion_tokens", "reasoning_tokens"):
            value = getattr(turn.usage, name)
            if value is not None:
                setattr(total, name, (getattr(total, name) or 0) + value)
    return totals

