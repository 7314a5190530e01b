"""`eegbench verify RUN`: is the run directory whole? Every problem names the entry and the file.

Checked: run.json reads; every line of results.jsonl parses; no (case, epoch) is finished
twice; every finished entry has its instance.json, report.md, artifacts.json, transcript.json
and (unless infra_error) score.json, agreeing with its results line on status and score; every
retained artifact has the size and sha256 artifacts.json gives; and once every instance of
run.json has finished, the saved instances hash to run.json's instance_set_hash.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from runner.benchmark.catalog import instance_set_hash
from runner.run.records import ArtifactEntry, ResultRecord, TranscriptRecord, split_key
from runner.run.store import RESULTS, RunStore
from validation.instance import load_instance

ENTRY_FILES = ("instance.json", "report.md", "artifacts.json", "transcript.json")


@dataclass
class Verification:
    """What verify found: the problems (none: the run is whole) and how far the run got."""

    problems: list[str] = field(default_factory=list)
    finished: int = 0
    expected: int | None = None  # instances x epochs, from run.json
    artifacts: int = 0

    @property
    def ok(self) -> bool:
        """No problem found."""
        return not self.problems


def verify_run(store: RunStore) -> Verification:
    """Check `store`'s directory; never raises for what the directory holds."""
    found = Verification()
    try:
        record = store.read_run()
    except Exception as exc:  # noqa: BLE001 - a broken run.json is a finding, not a crash
        found.problems.append(f"run.json: {exc}")
        return found
    results = _results(store, found)
    finished = [r for r in results if r.status != "infra_error"]
    for key, count in Counter(r.key for r in finished).items():
        if count > 1:
            found.problems.append(f"results.jsonl: {key} is finished {count} times")
    for result in {r.key: r for r in finished}.values():
        _check_entry(store, result, found)
    found.finished = len({r.key for r in finished})
    instances = record.model_extra.get("instances") if record.model_extra else None
    epochs = int(record.config.get("epochs") or 1)
    found.expected = int(instances) * epochs if isinstance(instances, int) else None
    if found.expected is not None and found.finished == found.expected:
        _check_instance_set(store, record.model_extra.get("instance_set_hash") if record.model_extra else None,
                            finished, found)
    return found


def _results(store: RunStore, found: Verification) -> list[ResultRecord]:
    path = store.root / RESULTS
    if not path.exists():
        return []
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            records.append(ResultRecord.model_validate_json(line))
        except ValidationError:
            found.problems.append(f"results.jsonl line {number}: not a whole result (torn write?)")
    return records


def _check_entry(store: RunStore, result: ResultRecord, found: Verification) -> None:
    folder = store.instance_dir(result.key)
    missing = [name for name in ENTRY_FILES if not (folder / name).is_file()]
    if result.status != "infra_error" and not (folder / "score.json").is_file():
        missing.append("score.json")
    if missing:
        found.problems.append(f"{result.key}: missing {', '.join(missing)} in {folder}")
        return
    try:
        transcript = TranscriptRecord.model_validate_json((folder / "transcript.json").read_text(encoding="utf-8"))
        score = json.loads((folder / "score.json").read_text(encoding="utf-8"))
        entries = [ArtifactEntry.model_validate(e) for e in json.loads((folder / "artifacts.json").read_text(encoding="utf-8"))]
    except (ValueError, ValidationError) as exc:
        found.problems.append(f"{result.key}: unreadable record in {folder}: {str(exc)[:200]}")
        return
    if transcript.status != result.status:
        found.problems.append(f"{result.key}: transcript.json says {transcript.status}, results.jsonl {result.status}")
    if score.get("score") != result.score:
        found.problems.append(f"{result.key}: score.json says {score.get('score')}, results.jsonl {result.score}")
    for entry in entries:
        _check_artifact(store.artifacts_dir(result.key), result.key, entry, found)


def _check_artifact(folder: Path, key: str, entry: ArtifactEntry, found: Verification) -> None:
    if entry.sha256 is None:
        return  # refused (symlink, special file, size cap): recorded, never copied
    path = folder / entry.path
    if not path.is_file():
        found.problems.append(f"{key}: artifact {entry.path} is listed in artifacts.json but missing")
        return
    data = path.read_bytes()
    found.artifacts += 1
    if hashlib.sha256(data).hexdigest() != entry.sha256 or (entry.bytes is not None and len(data) != entry.bytes):
        found.problems.append(f"{key}: artifact {entry.path} does not match its sha256/size in artifacts.json")


def _check_instance_set(store: RunStore, expected_hash: object, finished: list[ResultRecord],
                        found: Verification) -> None:
    cases = sorted({split_key(r.key)[0] for r in finished})
    try:
        saved = [load_instance(store.instance_dir(case) / "instance.json") for case in cases]
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        found.problems.append(f"instance set: a saved instance.json does not load: {str(exc)[:200]}")
        return
    if expected_hash is not None and instance_set_hash(saved) != expected_hash:
        found.problems.append("run.json: instance_set_hash does not match the instances the run holds")
