"""The run directory: run.json, results.jsonl and one audit directory per instance.

runs/<run_id>/
  run.json                 settings, versions, instance-set hash
  results.jsonl            one line per finished instance, appended atomically
  instances/<case_id>/     transcript.json, report.md, score.json, artifacts/ + manifest

An instance's directory is complete before its results line is appended, so a line in
results.jsonl always points at a full audit record; a crash leaves at most an orphan
directory that the next attempt overwrites.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import threading
from pathlib import Path

from pydantic import BaseModel, Field

from runner.config import RunConfig
from runner.fileio import write_atomic, write_json

RESULTS = "results.jsonl"
RUN_JSON = "run.json"
MAX_ARTIFACT_BYTES = 200 * 1024 * 1024


class RunConflict(RuntimeError):
    """RUN names an existing run made with different settings."""


class ResultRecord(BaseModel):
    case_id: str
    task_id: str
    bench_subset: str
    difficulty: str | None = None
    status: str
    score: float | None  # 0..100; None for infra_error (never scored)
    rounds: int
    prompt_tokens: int
    completion_tokens: int
    duration_s: float
    error: str | None = None
    unscored: list[str] = Field(default_factory=list)  # metric ids left out of the score
    violations: int = 0  # unsafe artifact paths the scorer refused


class RunStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()

    @property
    def run_id(self) -> str:
        return self.root.name

    def exists(self) -> bool:
        return (self.root / RUN_JSON).exists()

    def read_run(self) -> dict:
        return json.loads((self.root / RUN_JSON).read_text())

    def open(self, config: RunConfig, environment: dict) -> bool:
        """Create the run, or check a rerun matches it. Returns True when resuming."""
        if self.exists():
            self._check_same(config)
            self._compact_results()
            return True
        (self.root / "instances").mkdir(parents=True, exist_ok=True)
        write_json(self.root / RUN_JSON, {"config": config.model_dump(mode="json"), **environment})
        return False

    def _check_same(self, config: RunConfig) -> None:
        recorded = RunConfig.model_validate(self.read_run()["config"]).resume_key()
        wanted = config.resume_key()
        diffs = [key for key in sorted(set(recorded) | set(wanted)) if recorded.get(key) != wanted.get(key)]
        if diffs:
            raise RunConflict(
                f"run {self.run_id} exists with different settings ({', '.join(diffs)}); "
                "choose another RUN= or rerun with the recorded settings"
            )

    def results(self) -> list[ResultRecord]:
        path = self.root / RESULTS
        if not path.exists():
            return []
        records = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(ResultRecord.model_validate_json(line))
            except ValueError:
                continue  # a line cut by a crash: the instance is simply not finished
        return records

    def finished(self) -> dict[str, ResultRecord]:
        return {r.case_id: r for r in self.results() if r.status != "infra_error"}

    def _compact_results(self) -> None:
        """On resume: keep one scored line per case; drop infra errors (retried) and torn lines."""
        kept: dict[str, ResultRecord] = {}
        for record in self.results():
            if record.status != "infra_error":
                kept.setdefault(record.case_id, record)
        text = "".join(r.model_dump_json() + "\n" for r in kept.values())
        write_atomic(self.root / RESULTS, text)

    def append_result(self, record: ResultRecord) -> None:
        line = (record.model_dump_json() + "\n").encode("utf-8")
        with self._lock:
            fd = os.open(self.root / RESULTS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)

    def instance_dir(self, case_id: str) -> Path:
        return self.root / "instances" / case_id

    def reset_instance(self, case_id: str) -> Path:
        path = self.instance_dir(case_id)
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        return path


def retain_artifacts(workspace: Path, dest: Path) -> list[dict]:
    """Copy regular files under workspace/file_check/ to dest, with sha256.

    Symlinks and special files are recorded, never followed: the workspace was written by
    hostile code. Copying stops at MAX_ARTIFACT_BYTES.
    """
    source = workspace / "file_check"
    manifest: list[dict] = []
    if source.is_symlink() or (source.exists() and not source.is_dir()):
        return [_refused_entry(source, "")]
    if not source.is_dir():
        return manifest
    copied = 0
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source).as_posix()
        mode = path.lstat().st_mode
        if stat.S_ISDIR(mode):
            continue
        if not stat.S_ISREG(mode):
            manifest.append(_refused_entry(path, rel))
            continue
        size = path.lstat().st_size
        if copied + size > MAX_ARTIFACT_BYTES:
            manifest.append({"path": rel, "bytes": size, "skipped": "artifact size cap reached"})
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = _copy_no_follow(path, target)
        copied += size
        manifest.append({"path": rel, "bytes": size, "sha256": digest})
    return manifest


def _refused_entry(path: Path, rel: str) -> dict:
    """A symlink or special file: recorded with where it points, never read."""
    if path.is_symlink():
        return {"path": rel, "skipped": "symlink (never followed)", "link_target": os.readlink(path)}
    return {"path": rel, "skipped": "not a regular file (special file)"}


def _copy_no_follow(src: Path, dst: Path) -> str:
    digest = hashlib.sha256()
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as reader, open(dst, "wb") as writer:
        for chunk in iter(lambda: reader.read(1 << 20), b""):
            digest.update(chunk)
            writer.write(chunk)
    return digest.hexdigest()
