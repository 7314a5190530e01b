"""The model contract: messages in, one reply out.

A `Model` is built once per run (it may own a server or an HTTP client); `session` gives a
per-instance conversation partner, because some models (oracle, scripted, replay) depend on
which instance and which turn they are at.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from runner.transcript import Usage
from validation.instance import Instance

Message = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": "..."}


class ModelError(RuntimeError):
    """A failed model call. `infrastructure` errors (transport, 429, 5xx after retries)
    end the instance as infra_error and are retried on resume; never scored as the model's."""

    def __init__(self, message: str, *, infrastructure: bool) -> None:
        super().__init__(message)
        self.infrastructure = infrastructure


@dataclass
class Completion:
    text: str
    usage: Usage
    latency_s: float


class ModelSession(ABC):
    @abstractmethod
    def complete(self, messages: list[Message]) -> Completion: ...


class Model(ABC):
    name: str  # as recorded in run.json, e.g. "oracle", "openai:gpt-4o"

    @abstractmethod
    def session(self, instance: Instance) -> ModelSession: ...

    def describe(self) -> dict:
        """Settings to record in run.json (no secrets)."""
        return {"name": self.name}

    def close(self) -> None:
        """Release what the model owns (servers, clients); safe to call twice."""
