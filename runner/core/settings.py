"""The settings of a run, one type per concern, each default written once.

- `ExecutionLimits`: what bounds one execution in the kernel (timeout, grace, output).
- `ResourceLimits`: what bounds one sandbox (memory, processes, CPUs).
- `SandboxLimits`: both, as a sandbox backend enforces them.
- `ControlLimits`: the interaction controls of the paradigms' loops (rounds, deadline,
  repeats, missing actions, the tools paradigm's ceilings), plus the execution limits.
- `ModelSettings`: generation settings of the evaluated model.
- `ScoringSettings`: parser mode and the scoring endpoints as given on the command line.

RunConfig (runner/core/config.py) holds one of each and is what run.json records. This module
imports nothing from the harness, so every layer (sandboxes, loops, models) can use it.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

ParserMode = Literal["auto", "rules", "llm"]
PARSER_MODES: tuple[ParserMode, ...] = ("auto", "rules", "llm")
ToolCalling = Literal["auto", "text"]
ReasoningEffort = Literal["none", "low", "medium", "high", "xhigh"]
MaxTokensField = Literal["max_tokens", "max_completion_tokens"]  # the body field of the reply limit
WORKSPACE_MIN_MB = 16  # ext4 needs a few MB of its own


class ExecutionLimits(BaseModel):
    """Per execution in the kernel (BrainBench's per-step timeout and output budget)."""

    model_config = ConfigDict(frozen=True)

    exec_timeout_s: float = Field(150.0, gt=0)
    grace_s: float = Field(5.0, ge=0)  # after an interrupt, before the hard kill
    output_budget_chars: int = Field(8000, ge=200)  # head and tail kept past this


class ResourceLimits(BaseModel):
    """Per sandbox."""

    model_config = ConfigDict(frozen=True)

    memory_mb: int = Field(4096, ge=128)
    pids: int = Field(256, ge=16)
    cpus: float = Field(1.0, gt=0)
    # /workspace's own file system (runner/sandbox/workspace.py); 0: unbounded
    workspace_mb: int = Field(2048, ge=0)

    @field_validator("workspace_mb")
    @classmethod
    def _workspace_fits_ext4(cls, value: int) -> int:
        if 0 < value < WORKSPACE_MIN_MB:
            raise ValueError(f"use 0 (unbounded) or at least {WORKSPACE_MIN_MB} MB")
        return value


class SandboxLimits(ResourceLimits, ExecutionLimits):
    """Everything a sandbox backend enforces: its resources and each execution's bounds."""


class ControlLimits(ExecutionLimits):
    """The interaction controls (BrainBench's CodeAct protocol; EEGAgentBench's tool loop)."""

    max_rounds: int = Field(20, ge=1)
    deadline_s: float = Field(720.0, gt=0)  # per instance
    repeat_limit: int = Field(3, ge=1)  # same code sha256 or same error fingerprint N times
    max_no_action: int = Field(3, ge=1)  # replies with neither <execute> nor <solution>
    # The tools paradigm: max_rounds is its turn ceiling.
    max_tool_calls: int = Field(999, ge=1)
    tool_budget_tokens: int = Field(8000, ge=100)  # tool-output budget, ~4 characters a token
    tool_calling: ToolCalling = "auto"  # auto: native function calling where supported
    # The brainagent paradigm: max_rounds is the supervisor's turn ceiling.
    max_objectives: int = Field(4, ge=1)  # delegations the supervisor may queue in all
    max_planning_rounds: int = Field(16, ge=1)  # per subagent; the last asks for the report
    state_summary_chars: int = Field(4000, ge=200)  # the shared_state view shown each round
    # Prompt + completion tokens over all of an instance's turns (every paradigm); None: no
    # ceiling. Checked before each model call, so the reply that crosses it is still acted on.
    max_instance_tokens: int | None = Field(None, ge=1)



class ModelSettings(BaseModel):
    """Generation settings of the evaluated model (the HTTP kinds use them), and the limits
    on how hard its endpoint is pushed (runner/models/ratelimit.py)."""

    model_config = ConfigDict(frozen=True)

    temperature: float | None = 0.0  # None: not sent (models that accept only their default)
    max_tokens: int | None = Field(None, ge=1)  # None: the model kind's own default
    # The body field the reply limit goes in (OpenAI's newer models want max_completion_tokens).
    max_tokens_field: MaxTokensField = "max_tokens"
    stop: tuple[str, ...] | None = None
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(5, ge=0)
    # None: not sent, the endpoint's default applies. BrainBench ran with reasoning off ("none").
    reasoning_effort: ReasoningEffort | None = None
    model_args: dict[str, Any] = Field(default_factory=dict)  # provider options, sent as given
    max_connections: int = Field(8, ge=1)  # requests in flight at once, over all jobs
    rpm: int | None = Field(None, ge=1)  # requests per minute
    tpm: int | None = Field(None, ge=1)  # tokens per minute (prompt + completion)


class ScoringSettings(BaseModel):
    """As given on the command line (None: the environment or the default decides)."""

    model_config = ConfigDict(frozen=True)

    parser: ParserMode = "auto"
    parser_model: str | None = None
    judge: str | None = None
    vlm_judge: str | None = None


def sandbox_limits(resources: ResourceLimits, execution: ExecutionLimits) -> SandboxLimits:
    """The limits a sandbox enforces, from a run's resources and its execution limits."""
    fields = ExecutionLimits.model_fields
    return SandboxLimits(**resources.model_dump(), **{k: getattr(execution, k) for k in fields})
