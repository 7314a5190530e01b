"""Replies as recorded in an earlier run.

Reads each case's transcript (runner/run/recorded.py, not the run store) and hands out each turn's raw
`reply` in order, then "". Re-running recorded replies against a changed sandbox or
controller shows what the change does to the same model behaviour. Token usage is not
replayed: no tokens are spent in the replaying run. In the tools paradigm, turns that made
native function calls are replayed as the same calls (ids, names, arguments).
"""
from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from runner.core.paths import Environment
from runner.core.settings import ModelSettings
from runner.core.transcript import Turn
from runner.models.base import Completion, Message, Model, ModelError, ModelSession, ToolCall
from runner.models.scripted import ListSession
from runner.run import recorded
from validation.errors import EegbenchError, UserError, describe_validation_errors
from validation.instance import Instance


class ReplayModel(Model):
    """Replays the replies of the run in `run_dir`."""

    def __init__(self, run_dir: Path) -> None:
        self.root = Path(run_dir)
        if not (self.root / recorded.RUN_JSON).exists():
            raise UserError(f"replay: {run_dir} is not a run directory (no {recorded.RUN_JSON})")
        try:
            recorded.read_run_record(self.root)  # refuses a run in a newer format now, not per instance
        except ValidationError as exc:
            raise UserError(f"replay: {self.root / recorded.RUN_JSON}: {describe_validation_errors(exc.errors())}") from None
        self.name = f"replay:{run_dir}"

    def session(self, instance: Instance) -> ModelSession:
        """The recorded replies of this case."""
        return _ReplaySession(self.root, instance.case_id)

    def describe(self) -> dict[str, str]:
        """The replayed run."""
        return {"name": self.name, "run_dir": str(self.root)}


class _ReplaySession(ModelSession):
    """Loads the recorded turns on the first call, so a missing case surfaces as a
    ModelError through the controller's normal path."""

    def __init__(self, root: Path, case_id: str) -> None:
        self._root = root
        self._case_id = case_id
        self._turns: list[Turn] | None = None
        self._inner: ListSession | None = None

    def _load(self) -> tuple[list[Turn], ListSession]:
        if self._turns is None or self._inner is None:
            self._turns = recorded_turns(self._root, self._case_id)
            self._inner = ListSession([t.reply for t in self._turns])
        return self._turns, self._inner

    def complete(self, messages: list[Message]) -> Completion:
        """The next recorded reply."""
        return self._load()[1].complete(messages)

    def complete_with_tools(self, messages: list[Message], tools: list[dict[str, object]]) -> Completion:
        """The next recorded reply, with the native calls it made."""
        turns, inner = self._load()
        index = inner.calls
        completion = inner.complete(messages)
        if index < len(turns):
            completion.tool_calls = native_calls(turns[index])
        return completion


def native_calls(turn: Turn) -> list[ToolCall]:
    """The native function calls of one recorded turn (none for text replies)."""
    calls = []
    for call in turn.tool_calls:
        if call.call_id is None:
            continue  # a JSON text action: the reply text already carries it
        raw = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        calls.append(ToolCall(id=call.call_id, name=call.name, arguments=raw))
    return calls


def recorded_turns(root: Path, case_id: str) -> list[Turn]:
    """The turns of one case of the run at `root`, in order; ModelError when absent or unreadable."""
    try:
        return recorded.read_transcript(root, case_id).turns
    except (EegbenchError, ValidationError, OSError) as exc:
        raise ModelError(f"replay: {exc}", infrastructure=False) from exc


def build(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    """MODEL=replay:RUN_DIR: the replies a finished run recorded."""
    return ReplayModel(Path(str(argument)))
