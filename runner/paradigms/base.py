"""The paradigm contract: how a model works through one instance.

A paradigm receives an `Episode` (the instance, the model session, the controls, the
instance's sandbox when it asked for one, and the scheduler's hooks) and returns the
`InstanceOutcome` (status, report, turns, messages). It owns no resources: the scheduler
starts and tears down the sandbox and the session, so every way a paradigm can end leaves
teardown to one place. Register a paradigm in runner/paradigms/__init__.py.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.core.settings import ControlLimits
from runner.core.transcript import InfraEvent, Turn
from runner.models.base import ModelSession
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
