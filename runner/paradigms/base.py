"""The paradigm contract: how a model works through one instance.

A paradigm receives an `Episode` (the instance, the model session, the controls, the
instance's sandbox when it asked for one, and the scheduler's hooks) and returns the
`InstanceOutcome` (status, report, turns, messages). It owns no resources: the scheduler
starts and tears down the sandbox and the session, so every way a paradigm can end leaves
teardown to one place. Register a paradigm in runner/paradigms/__init__.py.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.core.settings import ControlLimits
from runner.core.transcript import InfraEvent, Turn
from runner.models.base import CHARS_PER_TOKEN, Message, ModelSession
from runner.paradigms.loop import InstanceOutcome, ignore_event, ignore_turn, never
from runner.sandbox.base import Sandbox
from validation.instance import Instance


@dataclass(frozen=True)
class Episode:
    """Everything a paradigm works with for one instance."""

    instance: Instance
    session: ModelSession
    controls: ControlLimits
    data_root: Path  # host folder of the inputs (the tools paradigm reads them in-process)
    sandbox: Sandbox | None = None  # set when the paradigm's needs_sandbox is True
    should_stop: Callable[[], bool] = never  # the run is being stopped
    on_turn: Callable[[Turn], None] = ignore_turn  # called as each turn is recorded
    on_event: Callable[[InfraEvent], None] = ignore_event  # retries, restarts, sandbox failures


@dataclass(frozen=True)
class FirstRequest:
    """An instance's first model call: its messages and the tool schemas sent with them."""

    messages: list[Message]
    tools: list[dict[str, Any]] = field(default_factory=list)


class Paradigm(ABC):
    """One way of letting a model work on an instance (codeact, tools, hybrid, ...)."""

    name: str
    needs_sandbox: bool = True  # False: the scheduler starts no sandbox (episode.sandbox None)
    libraries: tuple[Path, ...] = ()  # package dirs mounted read-only and importable in the kernel

    @abstractmethod
    def run(self, episode: Episode) -> InstanceOutcome:
        """Work through the instance and say how it ended."""

    def describe(self) -> dict[str, Any]:
        """What run.json records about the paradigm (anything that changes what the model sees)."""
        return {"name": self.name}

    def first_request(self, instance: Instance, controls: ControlLimits, data_root: Path) -> FirstRequest:
        """The messages and tool schemas of the instance's first model call, as `run` sends
        them: what `eval --dry-run` counts. A paradigm that does not say is counted as the
        instruction alone."""
        return FirstRequest([{"role": "user", "content": instance.agent_input.instruction}])

    def typical_calls(self, controls: ControlLimits, reply_tokens: int) -> tuple[int, int]:
        """(model calls of a typical instance, prompt tokens each turn adds), for `eval
        --dry-run`: half the turn ceiling, each turn adding half the reply limit and half the
        cell-output budget."""
        return math.ceil(controls.max_rounds / 2), (reply_tokens + controls.output_budget_chars // CHARS_PER_TOKEN) // 2
