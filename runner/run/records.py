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

from runner.core.transcript import InfraEvent, InstanceStatus, Turn
from validation.errors import UserError
from validation.instance import Instance

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
    epoch: int = 1  # absent before --epochs existed
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


EPOCH_MARK = "@"  # instances/<case_id>@<epoch>/ holds epoch 2 and later; epoch 1 keeps <case_id>/


def entry_key(case_id: str, epoch: int = 1) -> str:
    """The name of one run of one instance: the case id for epoch 1 (so a run made before
    epochs existed reads unchanged), `<case_id>@<epoch>` for later epochs."""
    if epoch < 1:
        raise ValueError(f"{case_id}: epoch must be >= 1, got {epoch}")
    return case_id if epoch == 1 else f"{case_id}{EPOCH_MARK}{epoch}"


def split_key(key: str) -> tuple[str, int]:
    """The case id and epoch an entry key names (inverse of entry_key)."""
    case_id, mark, epoch = key.rpartition(EPOCH_MARK)
    if mark and epoch.isdigit() and int(epoch) >= 2:
        return case_id, int(epoch)
    return key, 1


class EpochInstance(Instance):
    """One epoch of one instance: the unit of work of a run. It is an Instance, so executors
    and `Model.session` take it unchanged, and it says which epoch runs (models that reply
    per epoch read it with `epoch_of`). What is saved and scored is `as_instance()`."""

    epoch: int = Field(1, ge=1)

    @classmethod
    def of(cls, instance: Instance, epoch: int) -> EpochInstance:
        """`instance` at `epoch` (its parts are shared, not copied)."""
        return cls(**dict(instance), epoch=epoch)

    @property
    def key(self) -> str:
        """The entry key of this epoch: instances/<key>/ holds its record."""
        return entry_key(self.case_id, self.epoch)

    def as_instance(self) -> Instance:
        """The plain instance, without the epoch (instance.json stays as the catalog's)."""
        return Instance(**{name: value for name, value in self if name != "epoch"})


def epoch_of(instance: Instance) -> int:
    """Which epoch a unit of work runs (a plain Instance is epoch 1)."""
    return instance.epoch if isinstance(instance, EpochInstance) else 1


def key_of(instance: Instance) -> str:
    """The entry key of a unit of work (a plain Instance: its case id)."""
    return entry_key(instance.case_id, epoch_of(instance))


def plain_instance(instance: Instance) -> Instance:
    """A unit of work as the instance it runs (what is saved and scored)."""
    return instance.as_instance() if isinstance(instance, EpochInstance) else instance


class ResultRecord(BaseModel):
    """One line of results.jsonl: a finished run of one instance (one epoch)."""

    case_id: str
    epoch: int = 1  # absent before --epochs existed
    task_id: str
    bench_subset: str
    difficulty: str | None = None
    status: InstanceStatus
    score: float | None  # 0..100; None for infra_error (never scored)
    rounds: int
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int = 0  # part of completion_tokens; absent before endpoints reported it
    duration_s: float
    error: str | None = None
    unscored: list[str] = Field(default_factory=list)  # metric ids left out of the score
    violations: int = 0  # unsafe artifact paths the scorer refused

    @property
    def key(self) -> str:
        """The entry key: which instances/<key>/ directory holds this result's record."""
        return entry_key(self.case_id, self.epoch)


def token_totals(turns: list[Turn]) -> dict[str, int]:
    """ResultRecord's token fields summed over the turns (a count not reported counts 0)."""
    return {name: sum(getattr(t.usage, name) or 0 for t in turns)
            for name in ("prompt_tokens", "completion_tokens", "reasoning_tokens")}


class GroupSummary(BaseModel):
    """Counts and means over one group of results (all, or one subset)."""

    instances: int
    scored: int
    mean_score: float | None
    statuses: dict[str, int]
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int = 0  # part of completion_tokens; absent in summaries written before
    duration_s: float


class RunSummary(BaseModel):
    """summary.json: what `eegbench logs` and `show RUN` print, computed from results.jsonl."""

    format_version: int = FORMAT_VERSION
    run_id: str
    results: int  # lines of results.jsonl it was computed from
    groups: dict[str, GroupSummary]  # "all", then one per subset
    with_unscored_units: int
    violations: int
    epochs: dict[int, GroupSummary] = Field(default_factory=dict)  # by epoch, when the run has more than one
