"""What every paradigm's loop shares: the round driver, the stop and deadline checks, the
model call's error mapping, the turn record and the outcome.

A paradigm subclasses TurnLoop and implements `_round`; raising Stop anywhere ends the
instance with that status.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Callable

from runner.models.base import Message, ModelError
from runner.transcript import InstanceStatus, Turn


@dataclass
class InstanceOutcome:
    status: InstanceStatus
    report: str | None
    turns: list[Turn]
    messages: list[Message]
    error: str | None = None
    notes: list[str] = field(default_factory=list)


class Stop(Exception):
    def __init__(self, status: InstanceStatus, error: str | None = None) -> None:
        self.status = status
        self.error = error


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class TurnLoop:
    # set by subclasses' __init__
    controls: object
    should_stop: Callable[[], bool]
    on_turn: Callable[[Turn], None]
    messages: list[Message]
    turns: list[Turn]
    deadline: float

    def run(self) -> InstanceOutcome:
        try:
            for index in range(self.controls.max_rounds):
                outcome = self._round(index, final=index == self.controls.max_rounds - 1)
                if outcome is not None:
                    return outcome
        except Stop as stop:
            return self._end(stop.status, None, stop.error)
        return self._end("max_rounds", None)

    def _round(self, index: int, final: bool) -> InstanceOutcome | None:
        raise NotImplementedError

    def _model_call(self, call: Callable[[], object]):
        try:
            return call()
        except ModelError as exc:
            kind = "infrastructure" if exc.infrastructure else "request"
            raise Stop("infra_error", f"model {kind} error: {exc}") from exc

    def _check_time(self) -> None:
        if self.should_stop():
            raise Stop("infra_error", "run interrupted")
        if time.monotonic() >= self.deadline:
            raise Stop("deadline", f"instance deadline of {self.controls.deadline_s:g} s passed")

    def _record(self, turn: Turn) -> None:
        if self.turns and self.turns[-1] is turn:
            return
        self.turns.append(turn)
        self.on_turn(turn)

    def _end(self, status: InstanceStatus, report: str | None, error: str | None = None) -> InstanceOutcome:
        return InstanceOutcome(status, report, self.turns, self.messages, error)
