"""Reading a recorded run: run.json and one entry's transcript, and the file names they use.

The run store (runner/run/store.py), which also writes these files, reads them through this
module, and so does the replay model (runner/models/replay.py): a model client reads a
recorded run without depending on the store, which sits above every model.
"""
from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from runner.core.transcript import InfraEvent, Turn
from runner.run.records import RunRecord, TranscriptRecord, check_format
from validation.errors import UserError

RUN_JSON = "run.json"
TRANSCRIPT = "transcript.json"
TURNS = "turns.jsonl"  # streamed while the instance runs; folded into transcript.json at the end


class MissingRecord(UserError, FileNotFoundError):
    """A run or an instance record that is not there; the message names run, entry and file."""


def read_run_record(root: Path) -> RunRecord:
    """runs/<run>/run.json, typed; refuses a newer format."""
    path = root / RUN_JSON
    if not path.is_file():
        raise MissingRecord(f"{root} is not a run directory (no {RUN_JSON})")
    record = RunRecord.model_validate_json(path.read_text(encoding="utf-8"))
    check_format(record.format_version, f"run {root.name}")
    return record


def entry_dir(root: Path, key: str) -> Path:
    """instances/<key>/ of the run at `root` for an entry key (checked: it names a directory)."""
    if not key or "/" in key or key in (".", ".."):
        raise UserError(f"run {root.name}: {key!r} is not a case id")
    return root / "instances" / key


def read_transcript(root: Path, key: str) -> TranscriptRecord:
    """The entry's transcript; for an unfinished one, the turns streamed so far."""
    path = entry_dir(root, key) / TRANSCRIPT
    if not path.is_file():
        raise MissingRecord(f"run {root.name} has no instance {key!r} (no {path})")
    transcript = TranscriptRecord.model_validate_json(path.read_text(encoding="utf-8"))
    if transcript.status is None:
        turns, events = _read_stream(path.parent / TURNS)
        transcript = transcript.model_copy(update={"turns": turns, "events": events})
    return transcript


def _read_stream(path: Path) -> tuple[list[Turn], list[InfraEvent]]:
    turns: list[Turn] = []
    events: list[InfraEvent] = []
    if not path.is_file():
        return turns, events
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
            if "turn" in entry:
                turns.append(Turn.model_validate(entry["turn"]))
            elif "event" in entry:
                events.append(InfraEvent.model_validate(entry["event"]))
        except (ValueError, ValidationError):
            continue  # the line being written when the controller died
    return turns, events
