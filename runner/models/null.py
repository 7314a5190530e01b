"""The floor: a model that gives up at once with an empty solution."""
from __future__ import annotations

from typing import Any

from runner.core.paths import Environment
from runner.core.settings import ModelSettings
from runner.core.transcript import Usage
from runner.models.base import Completion, Message, Model, ModelSession
from validation.instance import Instance

EMPTY_SOLUTION = "<solution></solution>"
EMPTY_ANSWER = '{"action": "final_answer", "answer": null}'  # the same floor in the tools paradigm


class NullModel(Model):
    """The score floor: every instance ends at its first turn with an empty answer."""

    name = "null"

    def session(self, instance: Instance) -> ModelSession:
        """A session that answers every turn with the empty solution (or final_answer null)."""
        return _NullSession()


class _NullSession(ModelSession):
    def complete(self, messages: list[Message]) -> Completion:
        return Completion(text=EMPTY_SOLUTION, usage=Usage(), latency_s=0.0)

    def complete_with_tools(self, messages: list[Message], tools: list[dict[str, Any]]) -> Completion:
        return Completion(text=EMPTY_ANSWER, usage=Usage(), latency_s=0.0)


def build(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    """MODEL=null: the empty answer."""
    return NullModel()
