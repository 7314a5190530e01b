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
    "context_exceeded",  # the model's conversation outgrew the endpoint's context: scored as produced
    "refused",  # the endpoint's refusal or content filter ended the reply: scored as produced
    "request_rejected",  # another request error the model's turns caused (4xx): scored as produced
    "infra_error",
]


EventKind = Literal["model_retry", "kernel_restart", "sandbox_failure", "interrupted"]


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


class Observation(BaseModel):
    """The result of one execution, as returned to the model (already truncated)."""

    text: str
    status: ExecStatus
    duration_s: float
    error_name: str | None = None  # exception class, e.g. "ZeroDivisionError"
    error_value: str | None = None
    restarted: bool = False  # the kernel was killed and restarted after this execution
    truncated_chars: int = 0  # characters removed by head+tail truncation


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
        for name in ("prompt_tokens", "completion_tokens"):
            value = getattr(turn.usage, name)
            if value is not None:
                setattr(total, name, (getattr(total, name) or 0) + value)
    return totals

