"""The run directory, and the one place that writes it (run.json and a transcript are read
through runner/run/recorded.py, which the replay model uses too).

runs/<run_id>/
  run.json                 format version, settings, versions, instance-set hash, the hash of
                           each instance, and the reruns --rerun-changed made
  results.jsonl            one line per finished entry (instance and epoch), appended atomically
  summary.json             counts and means per subset (rewritten when a run stops)
  instances/<key>/         instance.json (as scored), transcript.json, turns.jsonl (while it
                           runs), report.md, score.json, artifacts/ + artifacts.json,
                           controller.log, scores/<name>.json (re-scores)
  scores/<name>.jsonl      re-scores; audit-parser.json
  superseded/<n>/<key>/    entries of cases that changed or left the set, set aside by the
                           n-th --rerun-changed

Every per-instance method takes an entry key (records.entry_key): the case id for epoch 1,
`<case_id>@<k>` for epoch k >= 2, so a run made before epochs existed reads unchanged.

An instance's directory is complete (and on disk: fsynced) before its results line is
appended, so a line in results.jsonl always points at a full audit record; a crash leaves at
most an unfinished directory (its transcript has no status, its turns are in turns.jsonl) that
`eegbench show` can read and the next attempt overwrites. On resume, a line whose directory is
not whole is dropped, so that entry runs again.

A full file system (ENOSPC, EDQUOT) under any write stops the run with one DiskFull naming the
runs directory; a results line that did not fit is cut off again, never left torn.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from pydantic import BaseModel, ValidationError

from runner.core.config import RunConfig
from runner.core.fileio import is_disk_full, write_atomic, write_json
from runner.core.transcript import InfraEvent, Turn
from runner.run import instance_set, recorded
from runner.run.artifacts import retain_artifacts
from runner.run.recorded import RUN_JSON, TRANSCRIPT, TURNS, MissingRecord
from runner.run.records import (
    FORMAT_VERSION,
    ArtifactEntry,
    ResultRecord,
    RunRecord,
    RunSummary,
    TranscriptRecord,
    check_format,
    split_key,
)
from runner.run.summary import summarize
from runner.sandbox.procfs import start_time
from validation.errors import UserError
from validation.instance import Instance, dump_instance, load_instance
from validation.scoring import InstanceScore

RESULTS = "results.jsonl"
SUMMARY = "summary.json"
CONTROLLER_LOG = "controller.log"


class RunConflict(UserError, ValueError):
    """RUN names an existing run made with different settings."""


class DiskFull(UserError):
    """The runs directory's file system is full (or over quota): the run cannot go on."""


ENTRY_FILES = ("instance.json", "report.md", "artifacts.json", "transcript.json", "score.json")

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _stops_when_full(method: Callable[Concatenate[RunStore, _P], _R]) -> Callable[Concatenate[RunStore, _P], _R]:
    """Every writing method of RunStore: ENOSPC/EDQUOT becomes one DiskFull, no traceback."""

    @functools.wraps(method)
    def writing(store: RunStore, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(store, *args, **kwargs)
        except OSError as exc:
            if not is_disk_full(exc):
                raise
            where = f" ({exc.filename})" if exc.filename else ""
            raise DiskFull(
                f"the runs directory {store.root.parent} is full: {exc.strerror}{where}; "
                f"run {store.run_id} stopped, finished instances are kept: free space, then rerun with "
                f"RUN={store.run_id} to resume"
            ) from None

    return writing


class RunStore:
    """Owns runs/<run_id>/: every write of a run directory goes through it, and every read but a replay's."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()

    @property
    def run_id(self) -> str:
        """The run's name (its directory's name)."""
        return self.root.name

    def exists(self) -> bool:
        """Whether run.json is there."""
        return (self.root / RUN_JSON).exists()

    # -- run.json ----------------------------------------------------------------------------

    def read_run(self) -> RunRecord:
        """run.json, typed; refuses a newer format."""
        return recorded.read_run_record(self.root)

    def config(self) -> RunConfig:
        """The settings the run was made with."""
        return RunConfig.from_record(self.read_run().config)

    @_stops_when_full
    def open(self, config: RunConfig, environment: dict[str, Any], rerun_changed: bool = False) -> bool:
        """Create the run, or check a rerun matches it (settings and instance set). Returns True
        when resuming. `environment` holds the instance set (`instance_hashes`, case id ->
        hash); a changed set is refused unless `rerun_changed`, which sets the changed and
        removed cases' entries aside (superseded/) so that exactly those run again."""
        if self.exists():
            self._check_same(config)
            self._check_instances(environment, rerun_changed)
            self.record_epochs(config.epochs)
            self._compact_results()
            return True
        (self.root / "instances").mkdir(parents=True, exist_ok=True)
        record = {"format_version": FORMAT_VERSION, "config": config.model_dump(mode="json"), **environment}
        write_json(self.root / RUN_JSON, record)
        return False

    def _check_same(self, config: RunConfig) -> None:
        recorded = self.config().resume_key()
        wanted = config.resume_key()
        diffs = [key for key in sorted(set(recorded) | set(wanted)) if recorded.get(key) != wanted.get(key)]
        if diffs:
            raise RunConflict(
                f"run {self.run_id} exists with different settings ({', '.join(diffs)}); "
                "choose another RUN= or rerun with the recorded settings"
            )

    def _check_instances(self, environment: dict[str, Any], rerun_changed: bool) -> None:
        current: dict[str, str] = environment.get("instance_hashes") or {}
        changes = instance_set.compare(self._recorded_hashes(current), current)
        if not changes:
            return
        if not rerun_changed:
            raise RunConflict(
                f"run {self.run_id}: the instance set changed since the run started: {changes.describe()}; "
                "resuming would score a mixture. Start a new run (another RUN= / --run), or rerun exactly "
                "the changed cases here with --rerun-changed (EVAL_ARGS=--rerun-changed)"
            )
        self._supersede(changes, environment)

    def _recorded_hashes(self, current: dict[str, str]) -> dict[str, str]:
        """run.json's instance hashes; for a run made before they were recorded, the hashes of
        the instance.json its started entries saved (cases it never started compare equal)."""
        extra = self.read_run().model_extra or {}
        if isinstance(extra.get("instance_hashes"), dict):
            return dict(extra["instance_hashes"])
        saved = {}
        for folder in sorted((self.root / "instances").glob("*/instance.json")):
            case = split_key(folder.parent.name)[0]
            with contextlib.suppress(Exception):  # an unreadable one was never scored: it runs again
                saved[case] = instance_set.instance_hash(load_instance(folder))
        return {**{c: h for c, h in current.items() if c not in saved}, **saved}

    def _supersede(self, changes: instance_set.Changes, environment: dict[str, Any]) -> None:
        """Move the entries of changed and removed cases to superseded/<n>/ and record the new
        instance set, with what was rerun, in run.json."""
        gone = set(changes.changed) | set(changes.removed)
        record = json.loads((self.root / RUN_JSON).read_text(encoding="utf-8"))
        reruns = record.get("reruns", [])
        aside = self.root / "superseded" / str(len(reruns) + 1)
        for folder in sorted((self.root / "instances").iterdir()):
            if split_key(folder.name)[0] in gone:
                aside.mkdir(parents=True, exist_ok=True)
                folder.rename(aside / folder.name)
        reruns.append({"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "changed": changes.changed,
                       "added": changes.added, "removed": changes.removed,
                       "superseded": str(aside.relative_to(self.root)) if aside.exists() else None})
        record.update({key: environment[key] for key in ("instance_hashes", "instance_set_hash", "instances")
                       if key in environment})
        record["reruns"] = reruns
        write_json(self.root / RUN_JSON, record)

    def record_epochs(self, epochs: int) -> None:
        """A rerun with more epochs extends the run: run.json's config then says how many it
        has (never fewer: a rerun with fewer epochs keeps the later ones)."""
        path = self.root / RUN_JSON
        data = json.loads(path.read_text(encoding="utf-8"))
        if epochs <= int(data["config"].get("epochs", 1)):
            return
        data["config"]["epochs"] = epochs
        write_json(path, data)

    # -- results.jsonl ---------------------------------------------------------------------

    def results(self) -> list[ResultRecord]:
        """Every readable line of results.jsonl, in order."""
        path = self.root / RESULTS
        if not path.exists():
            return []
        records = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(ResultRecord.model_validate_json(line))
            except ValidationError:
                continue  # a line cut by a crash: the instance is simply not finished
        return records

    def finished(self) -> dict[str, ResultRecord]:
        """Finished entries by entry key, the first line of each (an infra_error is not
        finished: it is retried)."""
        kept: dict[str, ResultRecord] = {}
        for record in self.results():
            if record.status != "infra_error":
                kept.setdefault(record.key, record)
        return kept

    def latest_results(self) -> list[ResultRecord]:
        """One results line per entry key, the last one written (a retried infra_error is
        superseded by its retry), in the order of those last lines: what readers report."""
        by_key: dict[str, ResultRecord] = {}
        for record in self.results():
            by_key.pop(record.key, None)
            by_key[record.key] = record
        return list(by_key.values())

    def entries(self) -> list[str]:
        """The entry keys of the finished entries, in results order (epoch 1 of a case is its
        case id, epoch k >= 2 `<case_id>@<k>`)."""
        return list(self.finished())

    def _compact_results(self) -> None:
        """On resume: keep one line per (case, epoch), the first; drop infra errors (retried),
        torn lines, and lines whose instance directory is not whole (they run again)."""
        kept = [r for r in self.finished().values() if self.is_recorded(r.key)]
        write_atomic(self.root / RESULTS, "".join(r.model_dump_json() + "\n" for r in kept))

    def is_recorded(self, key: str) -> bool:
        """Whether a finished entry's audit directory holds every file write_instance writes
        (`eegbench verify` checks their contents)."""
        folder = self.instance_dir(key)
        return all((folder / name).is_file() for name in ENTRY_FILES)

    @_stops_when_full
    def append_result(self, record: ResultRecord) -> None:
        """Append one line and fsync. A line that does not fit (ENOSPC) is cut off again, so
        results.jsonl never holds a torn line the next append would run into."""
        line = (record.model_dump_json() + "\n").encode("utf-8")
        with self._lock:
            fd = os.open(self.root / RESULTS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                end = os.fstat(fd).st_size
                try:
                    _write_all(fd, line)
                    os.fsync(fd)
                except OSError:
                    with contextlib.suppress(OSError):
                        os.ftruncate(fd, end)
                    raise
            finally:
                os.close(fd)

    # -- summary.json -------------------------------------------------------------------------

    @_stops_when_full
    def write_summary(self) -> RunSummary:
        """Recompute summary.json from results.jsonl."""
        summary = summarize(self.run_id, self.results())
        write_atomic(self.root / SUMMARY, summary.model_dump_json(indent=2) + "\n")
        return summary

    def summary(self) -> RunSummary:
        """summary.json when it covers every results line, else computed afresh (a run that
        is still going, or one written before summaries existed)."""
        results = self.results()
        path = self.root / SUMMARY
        if path.is_file():
            recorded = RunSummary.model_validate_json(path.read_text(encoding="utf-8"))
            check_format(recorded.format_version, f"{path}")
            if recorded.results == len(results):
                return recorded
        return summarize(self.run_id, results)

    # -- one instance: writing ----------------------------------------------------------------

    def instance_dir(self, key: str) -> Path:
        """instances/<key>/ for an entry key (checked: it names a directory)."""
        return recorded.entry_dir(self.root, key)

    def artifacts_dir(self, key: str) -> Path:
        """Where the entry's retained artifacts are."""
        return self.instance_dir(key) / "artifacts"

    def log_path(self, key: str) -> Path:
        """The entry's controller log."""
        return self.instance_dir(key) / CONTROLLER_LOG

    @_stops_when_full
    def begin_instance(self, key: str, paradigm: str) -> None:
        """A fresh directory holding an unfinished transcript (no status), so a running or
        killed entry can be inspected; turns then stream into turns.jsonl."""
        path = self.instance_dir(key)
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        case_id, epoch = split_key(key)
        header = TranscriptRecord(case_id=case_id, epoch=epoch, paradigm=paradigm, started_at=time.time(),
                                  controller_pid=os.getpid(), controller_start=start_time(os.getpid()))
        write_atomic(path / TRANSCRIPT, header.model_dump_json(indent=2) + "\n")

    @_stops_when_full
    def append_turn(self, key: str, turn: Turn) -> None:
        """Stream one turn of a running entry to disk."""
        self._append_stream(key, {"turn": turn.model_dump(mode="json")})

    @_stops_when_full
    def append_event(self, key: str, event: InfraEvent) -> None:
        """Stream one infrastructure event of a running entry to disk."""
        self._append_stream(key, {"event": event.model_dump(mode="json")})

    def _append_stream(self, key: str, entry: dict[str, Any]) -> None:
        with open(self.instance_dir(key) / TURNS, "a", encoding="utf-8") as stream:
            stream.write(json.dumps(entry, ensure_ascii=False) + "\n")

    @_stops_when_full
    def retain_artifacts(self, key: str, workspace: Path) -> list[ArtifactEntry]:
        """Copy the workspace's file_check/ into the entry's artifacts/ (see run.artifacts)."""
        return retain_artifacts(workspace, self.artifacts_dir(key))

    @_stops_when_full
    def write_retained(self, key: str, log_text: str, files: list[tuple[str, bytes]]) -> None:
        """An entry run elsewhere: its controller.log and retained artifacts, as a local run
        would have left them (paths are the worker's retained ones, checked to stay inside)."""
        if log_text:
            self.log_path(key).write_text(log_text, encoding="utf-8")
        root = self.artifacts_dir(key)
        for rel, data in files:
            target = (root / rel).resolve()
            if not target.is_relative_to(root.resolve()):
                raise ValueError(f"run {self.run_id}: {key}: artifact path {rel!r} leaves artifacts/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    @_stops_when_full
    def write_instance(self, key: str, instance: Instance, transcript: TranscriptRecord, report: str | None,
                       artifacts: list[ArtifactEntry], score: InstanceScore | None) -> None:
        """The finished entry's audit record: what was scored, what happened, the report,
        the artifact manifest and the score. Called before its results line is appended."""
        if split_key(key)[0] != instance.case_id:
            raise ValueError(f"run {self.run_id}: entry {key!r} is not a run of instance {instance.case_id!r}")
        path = self.instance_dir(key)
        _fsync_tree(self.artifacts_dir(key))  # copied unsynced; on disk before the results line
        write_atomic(path / "instance.json", dump_instance(instance))
        write_atomic(path / "report.md", report or "")
        write_json(path / "artifacts.json", [a.model_dump(mode="json", exclude_none=True) for a in artifacts])
        if score is not None:
            write_json(path / "score.json", score.model_dump(mode="json"))
        write_atomic(path / TRANSCRIPT, transcript.model_dump_json(indent=2) + "\n")
        (path / TURNS).unlink(missing_ok=True)

    @_stops_when_full
    def write_case_score(self, key: str, name: str, record: dict[str, Any]) -> None:
        """A re-score of one entry: instances/<key>/scores/<name>.json."""
        write_json(self.instance_dir(key) / "scores" / f"{name}.json", record)

    @_stops_when_full
    def write_scores(self, name: str, rows: list[BaseModel], settings: dict[str, Any]) -> Path:
        """A re-score of the run: scores/<name>.jsonl and its settings; returns the jsonl path."""
        path = self.root / "scores" / f"{name}.jsonl"
        write_atomic(path, "".join(r.model_dump_json() + "\n" for r in rows))
        write_json(self.root / "scores" / f"{name}.settings.json", settings)
        return path

    @_stops_when_full
    def write_audit(self, name: str, record: dict[str, Any]) -> Path:
        """A run-level audit file such as audit-parser.json."""
        path = self.root / f"{name}.json"
        write_json(path, record)
        return path

    # -- one instance: reading ----------------------------------------------------------------

    def read_transcript(self, key: str) -> TranscriptRecord:
        """The entry's transcript; for an unfinished one, the turns streamed so far."""
        return recorded.read_transcript(self.root, key)

    def saved_instance(self, key: str) -> Instance:
        """The instance as the entry scored it (instance.json), not the catalog's current one."""
        path = self.instance_dir(key) / "instance.json"
        if not path.is_file():
            raise MissingRecord(f"run {self.run_id}: instance {key!r} has no saved instance.json")
        return load_instance(path)

    def read_score(self, key: str) -> InstanceScore | None:
        """score.json, or None when the entry was not scored (infra_error, unfinished)."""
        path = self.instance_dir(key) / "score.json"
        if not path.is_file():
            return None
        return InstanceScore.model_validate_json(path.read_text(encoding="utf-8"))

    def read_report(self, key: str) -> str:
        """The entry's final report ("" when there was none)."""
        path = self.instance_dir(key) / "report.md"
        return path.read_text(encoding="utf-8") if path.is_file() else ""

    def read_artifacts(self, key: str) -> list[ArtifactEntry]:
        """The entry's artifact manifest ([] when it kept no files)."""
        path = self.instance_dir(key) / "artifacts.json"
        if not path.is_file():
            return []
        entries = json.loads(path.read_text(encoding="utf-8"))
        return [ArtifactEntry.model_validate(e) for e in entries]

    def read_rescore(self, key: str, name: str) -> InstanceScore | None:
        """An instance's score under the re-score `name` (scores/<name>.json), or None."""
        path = self.instance_dir(key) / "scores" / f"{name}.json"
        if not path.is_file():
            return None
        return InstanceScore.model_validate_json(path.read_text(encoding="utf-8"))

    def read_scores_settings(self, name: str) -> dict[str, Any] | None:
        """What parsed and judged in the re-score `name`, or None when there is no such re-score."""
        path = self.root / "scores" / f"{name}.settings.json"
        if not path.is_file():
            return None
        settings: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return settings


def _write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is written (a nearly full file system writes short)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _fsync_tree(folder: Path) -> None:
    """fsync every file under `folder`, then the directories (none: nothing to do)."""
    if not folder.is_dir():
        return
    paths = sorted(folder.rglob("*"), key=lambda p: p.is_dir())
    for path in [*paths, folder]:
        if path.is_symlink():
            continue
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def list_runs(runs_dir: Path) -> list[str]:
    """Names of the runs under a runs directory."""
    if not runs_dir.is_dir():
        return []
    return sorted(p.name for p in runs_dir.iterdir() if (p / RUN_JSON).exists())


def open_run(run: str, runs_dir: Path) -> RunStore:
    """A run by name (under runs_dir) or by path; MissingRecord lists the runs there."""
    path = Path(run)
    store = RunStore(path if path.is_dir() and (path / RUN_JSON).exists() else runs_dir / run)
    if not store.exists():
        known = ", ".join(list_runs(runs_dir)) or "none"
        raise MissingRecord(f"no run named {run!r} (looked in {runs_dir}); runs: {known}")
    store.read_run()  # refuses a newer format before anything else reads it
    return store
