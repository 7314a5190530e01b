"""RunConfig: every setting of a run, recorded in run.json and checked on resume.

`paradigm`, `sandbox` and `executor` name registered extensions (runner/paradigms,
runner/sandbox, runner/run/executors). The settings do not import them (they sit below every
part they configure): `eegbench eval` checks the names before a run starts
(evaluate.check_registered), and a run recorded with a name that no longer exists still reads.

`epochs` (how many times each instance runs) is not part of the resume key: rerunning a run
with more epochs extends it with the missing ones, with fewer runs nothing new.
"""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from runner.core.settings import (
    ControlLimits,
    ModelSettings,
    ResourceLimits,
    SandboxLimits,
    ScoringSettings,
    sandbox_limits,
)
from validation.errors import UserError

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class RunConfig(BaseModel):
    """The settings of one run (run.json's "config")."""

    run_id: str
    model: str
    paradigm: str = "codeact"
    selection: list[str] = Field(default_factory=list)  # SET=: subsets, tasks or case ids
    jobs: int = Field(1, ge=1)
    epochs: int = 1  # runs of every instance, in instances/<case_id>@<k>/ from the second on
    sandbox: str = "local"  # auto: docker when usable, else local
    executor: str = "threads"
    warm_pool: bool = False  # start the next instance's sandbox while the current one runs
    controls: ControlLimits = Field(default_factory=ControlLimits)
    resources: ResourceLimits = Field(default_factory=ResourceLimits)
    model_settings: ModelSettings = Field(default_factory=ModelSettings)
    scoring: ScoringSettings = Field(default_factory=ScoringSettings)
    # BrainBench case files run unchanged: instances from this folder, inputs under data_root.
    cases_dir: str | None = None
    data_root: str | None = None

    @field_validator("run_id")
    @classmethod
    def _run_id(cls, value: str) -> str:
        return check_run_id(value)

    @field_validator("epochs")
    @classmethod
    def _epochs(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"epochs must be at least 1 (each instance runs that many times), got {value}")
        return value

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> RunConfig:
        """A config as run.json recorded it (format 1 and later)."""
        return cls.model_validate(data)

    def sandbox_limits(self) -> SandboxLimits:
        """What the instance's sandbox enforces."""
        return sandbox_limits(self.resources, self.controls)

    def resume_key(self) -> dict[str, Any]:
        """Settings that must match for a rerun to resume this run: the model, its options and
        its endpoint's limits among them. How it is executed may change, and so may the number
        of epochs: a rerun with more extends the run."""
        return self.model_dump(mode="json", exclude={"jobs", "warm_pool", "executor", "epochs"})


def default_run_id(model: str, paradigm: str) -> str:
    """<model>-<paradigm>-<time>, from the model's last path component."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", Path(model).name if "/" in model else model).strip("-")
    return f"{slug or 'model'}-{paradigm}-{time.strftime('%Y%m%d-%H%M%S')}"


def check_run_id(run_id: str) -> str:
    """A run name usable as a directory name; UserError otherwise."""
    if not RUN_ID.fullmatch(run_id):
        raise UserError(f"RUN={run_id!r}: use letters, digits, '.', '_' and '-' (at most 100 characters)")
    return run_id
