"""The model contract: messages in, one reply out.

A `Model` is built once per run (it may own a server or an HTTP client); `session` gives a
per-instance conversation partner, because some models (oracle, scripted, replay) depend on
which instance and which turn they are at.
"""
from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal

from runner.core.transcript import Usage
from validation.errors import EegbenchError, UserError
from validation.instance import Instance

# {"role": "system"|"user"|"assistant", "content": "..."}; in the tools paradigm with native
# function calling also {"role": "assistant", "tool_calls": [...]} and {"role": "tool", ...}.
Message = dict[str, Any]
CHARS_PER_TOKEN = 4  # the token estimate of a request before (or without) the endpoint's count


def prompt_tokens(messages: list[Message], tools: list[dict[str, Any]] | None = None) -> int:
    """What a request's prompt costs, about: its JSON text (messages and any tool schemas) at
    CHARS_PER_TOKEN characters a token. The rate limiter charges this before a reply says,
    and `eval --dry-run` counts it."""
    sent = len(json.dumps(messages, ensure_ascii=False, default=str))
    if tools:
        sent += len(json.dumps(tools, ensure_ascii=False, default=str))
    return sent // CHARS_PER_TOKEN


# Whose failure a failed model call is (BrainBench's failure policy, appendix D):
# transport - the endpoint or the network (after retries): infra_error, never scored, retried on resume;
# harness   - a harness-side model could not answer (oracle without a reference, replay gap): infra_error;
# setup     - the run is misconfigured (key, base URL, model name, a parameter the endpoint rejects):
#             the whole run stops at once with one message, nothing is recorded for the instance;
# context_exceeded, refused, rejected - the model's own conversation (too long, a refusal or
#             content filter, another 4xx it caused): the instance ends with that status and is scored as produced;
# deadline  - the instance deadline passed while the call waited for the endpoint or ran: the call is
#             cancelled, the instance ends as `deadline` and is scored as produced.
ModelFailure = Literal["transport", "harness", "setup", "context_exceeded", "refused", "rejected", "deadline"]


class ModelError(EegbenchError, RuntimeError):
    """A failed model call; `kind` says whose failure it is (see ModelFailure)."""

    def __init__(self, message: str, *, infrastructure: bool, kind: ModelFailure | None = None) -> None:
        super().__init__(message)
        self.kind: ModelFailure = kind or ("transport" if infrastructure else "harness")
        self.infrastructure = self.kind == "transport"


class ModelSetupError(UserError):
    """The endpoint refuses this run's configuration: the run stops (nothing is scored for it)."""


@dataclass(frozen=True)
class ToolCall:
    """A native function call as the endpoint returned it; `arguments` is the raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass
class Completion:
    """One model reply: its text, token usage, latency and any native function calls."""

    text: str
    usage: Usage
    latency_s: float
    tool_calls: list[ToolCall] = field(default_factory=list)  # native function calls, if any
    retries: list[str] = field(default_factory=list)  # failed attempts before this reply
    queued_s: float = 0.0  # time its attempts waited for the endpoint limiter's grant


class ModelSession(ABC):
    """The conversation partner for one instance; the controller sends the whole history each turn.

    `deadline` (time.monotonic() seconds, set by the paradigm's loop) is the instance deadline:
    a session whose replies take time (an endpoint) ends a call still waiting or running then
    with ModelError(kind="deadline")."""

    deadline: float | None = None

    @abstractmethod
    def complete(self, messages: list[Message]) -> Completion:
        """The next reply to `messages`; ModelError when the model cannot give one."""

    def complete_with_tools(self, messages: list[Message], tools: list[dict[str, Any]]) -> Completion:
        """A reply in the tools paradigm. `tools` are OpenAI function schemas; kinds without
        native function calling ignore them and answer in text, which the tools loop reads
        as the paper's JSON action format."""
        return self.complete(messages)


class Model(ABC):
    """A model for a whole run; it hands out one session per instance."""

    name: str  # as recorded in run.json, e.g. "oracle", "openai:gpt-4o"

    @abstractmethod
    def session(self, instance: Instance) -> ModelSession:
        """A fresh conversation partner for `instance` (models may depend on which it is)."""

    def describe(self) -> dict[str, Any]:
        """Settings to record in run.json (no secrets)."""
        return {"name": self.name}

    def close(self) -> None:
        """Release what the model owns (servers, clients); safe to call twice."""
