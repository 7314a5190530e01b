"""What every paradigm's loop shares: the round driver, the stop and deadline checks, the
model call's error mapping, the turn record, infrastructure events and the outcome.

A paradigm's loop subclasses TurnLoop and implements `_round`; raising Stop anywhere ends the
instance with that status.
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from runner.core.settings import ControlLimits
from runner.core.transcript import EventKind, InfraEvent, InstanceStatus, Turn
from runner.models.base import Completion, Message, ModelError, ModelFailure, ModelSession, ModelSetupError
from validation.instance import Instance

C = TypeVar("C", bound=Completion)

# A request held back this long by the run's endpoint limits is an event in the transcript:
# a slow instance should show whether it waited on the endpoint's budget or on the model.
QUEUE_EVENT_S = 1.0

# How a failed model call ends the instance ("setup" stops the whole run instead).
MODEL_FAILURE_STATUS: dict[ModelFailure, InstanceStatus] = {
    "transport": "infra_error", "harness": "infra_error", "setup": "infra_error",
    "context_exceeded": "context_exceeded", "refused": "refused", "rejected": "request_rejected",
    "deadline": "deadline",
}


@dataclass
class InstanceOutcome:
    """How an instance ended: status, the report to score, and what happened."""

    status: InstanceStatus
    report: str | None
    turns: list[Turn]
    messages: list[Message]
    error: str | None = None
    notes: list[str] = field(default_factory=list)


class Stop(Exception):
    """Ends the instance with `status` (raised from anywhere inside a round)."""

    def __init__(self, status: InstanceStatus, error: str | None = None) -> None:
        super().__init__(error or status)
        self.status = status
        self.error = error


def sha256_text(text: str) -> str:
    """Hex sha256 of text (lone surrogates kept, so any model reply hashes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def never() -> bool:
    """The default stop check: the run is never being stopped."""
    return False


def ignore_turn(turn: Turn) -> None:
    """The default turn hook: nothing is streamed."""


def ignore_event(event: InfraEvent) -> None:
    """The default event hook: events are not reported."""


class TurnLoop:
    """The round driver; subclasses implement `_round` (one model reply and its action)."""

    def __init__(
        self,
        instance: Instance,
        session: ModelSession,
        controls: ControlLimits,
        messages: list[Message],
        *,
        should_stop: Callable[[], bool] = never,
        on_turn: Callable[[Turn], None] = ignore_turn,
        on_event: Callable[[InfraEvent], None] = ignore_event,
    ) -> None:
        self.instance = instance
        self.session = session
        self.controls = controls
        self.messages = messages
        self.should_stop = should_stop
        self.on_turn = on_turn
        self.on_event = on_event
        self.turns: list[Turn] = []
        self.tokens_used = 0  # prompt + completion over the instance's model calls
        self.started = time.monotonic()
        self.deadline = self.started + controls.deadline_s
        session.deadline = self.deadline  # a model call in flight ends at the deadline too

    def run(self) -> InstanceOutcome:
        """Rounds until an action ends the instance, a control stops it, or rounds run out."""
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

    def _model_call(self, call: Callable[[], C]) -> C:
        """One model reply; retried attempts become events, a failed call ends the instance.
        Every paradigm's calls pass here, so the instance's token ceiling is kept here: no
        call once the tokens so far reach it (the reply that crossed it was acted on)."""
        self._check_tokens()
        try:
            completion = call()
        except ModelError as exc:
            if exc.kind == "setup":
                raise ModelSetupError(f"{self.instance.case_id}: {exc}") from exc
            if exc.kind == "deadline":
                raise Stop("deadline", f"instance deadline of {self.controls.deadline_s:g} s passed: {exc}") from exc
            raise Stop(MODEL_FAILURE_STATUS[exc.kind], f"model {exc.kind} error: {exc}") from exc
        for retry in completion.retries:
            self._event("model_retry", retry)
        if completion.queued_s >= QUEUE_EVENT_S:
            self._event("model_wait", f"waited {completion.queued_s:.1f} s for the endpoint's limits "
                                      "(--max-connections, --rpm, --tpm) before the request was sent")
        self.tokens_used += completion.usage.total() or 0  # unreported usage cannot be counted
        return completion

    def _check_tokens(self) -> None:
        ceiling = self.controls.max_instance_tokens
        if ceiling is not None and self.tokens_used >= ceiling:
            raise Stop("token_limit", f"the instance used {self.tokens_used} tokens, "
                                      f"reaching the --max-instance-tokens ceiling of {ceiling}")

    def _event(self, kind: EventKind, detail: str, turn: int | None = None) -> None:
        """Report an infrastructure event of turn `turn` (default: the turn under way)."""
        self.on_event(InfraEvent(kind=kind, detail=detail, turn=len(self.turns) if turn is None else turn,
                                 at_s=round(time.monotonic() - self.started, 3)))

    def time_left(self) -> float:
        """Seconds until the instance deadline: what bounds the next execution's timeout."""
        return self.deadline - time.monotonic()

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
