"""The typed records of a run directory: run.json, one transcript per instance, the
artifact manifest, the results line and the run summary.

Format versions: 1 is the layout before run.json carried `format_version` (its files read
unchanged with these models: every field added since has a default); 2 adds the version, the
transcript's infrastructure events and start record, turns streamed to turns.jsonl while an
instance runs, and summary.json. A reader refuses a run written in a newer format.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runner.transcript import InfraEvent, InstanceStatus, Turn
from validation.errors import UserError

FORMAT_VERSION = 2


class NewerFormat(UserError, ValueError):
    """The run was written by a newer eegbench than the one reading it."""


def check_format(version: int, what: str) -> None:
    """Refuse a record whose format this code does not know yet."""
    if version > FORMAT_VERSION:
        raise NewerFormat(f"{what} has format version {version}; this eegbench reads versions up to "
                          f"{FORMAT_VERSION}: update eegbench to read it")


class RunRecord(BaseModel):
    """run.json: the settings (validated as RunConfig by the store) and the environment."""

    model_config = ConfigDict(extra="allow")

    format_version: int = 1  # absent in version 1
    config: dict[str, Any]

    def environment(self) -> dict[str, Any]:
        """Everything but the config: versions, backend, model and scoring descriptions."""
        return dict(self.model_extra or {})


class TranscriptRecord(BaseModel):
    """instances/<case>/transcript.json: everything the model and the controller did."""

    case_id: str
    status: InstanceStatus | None = None  # None: not finished (running, or its run was stopped)
    error: str | None = None
    messages: list[dict[str, Any]] = Field(default_factory=list)
    turns: list[Turn] = Field(default_factory=list)
    events: list[InfraEvent] = Field(default_factory=list)
    paradigm: str | None = None
    started_at: float | None = None  # Unix time
    controller_pid: int | None = None
    controller_start: int | None = None  # the pid's start time (/proc), telling a reused pid apart


class ArtifactEntry(BaseModel):
    """One file the model left under /workspace/file_check/, as retained (or refused)."""

    path: str
    bytes: int | None = None
    sha256: str | None = None
    skipped: str | None = None  # why it was not copied (symlink, special file, size cap)
    link_target: str | None = None

    def as_manifest(self) -> dict[str, Any]:
        """The plain dict the artifact checks read."""
        return self.model_dump(exclude_none=True)


class ResultRecord(BaseModel):
    """One line of results.jsonl: a finished instance."""

    case_id: str
    task_id: str
    bench_subset: str
    difficulty: str | None = None
    status: InstanceStatus
    score: float | None  # 0..100; None for infra_error (never scored)
    rounds: int
    prompt_tokens: int
    completion_tokens: int
    duration_s: float
    error: str | None = None
    unscored: list[str] = Field(default_factory=list)  # metric ids left out of the score
    violations: int = 0  # unsafe artifact paths the scorer refused


class GroupSummary(BaseModel):
    """Counts and means over one group of results (all, or one subset)."""

    instances: int
    scored: int
    mean_score: float | None
    statuses: dict[str, int]
    prompt_tokens: int
    completion_tokens: int
    duration_s: float


class RunSummary(BaseModel):
    """summary.json: what `eegbench logs` and `show RUN` print, computed from results.jsonl."""

    format_version: int = FORMAT_VERSION
    run_id: str
    results: int  # lines of results.jsonl it was computed from
    groups: dict[str, GroupSummary]  # "all", then one per subset
    with_unscored_units: int
    violations: int
