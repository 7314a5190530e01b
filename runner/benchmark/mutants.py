"""Mutants: plausible wrong analyses, each a small documented edit of a task's reference script.

A task's mutants live in reference_scripts/mutants/<task_id>.toml, one `[[mutant]]` table each:

    [[mutant]]
    name = "volts_read_as_microvolts"     # unique in the file: [a-z0-9_]+
    mistake = "unit"                      # one of MISTAKES
    why = "MNE returns volts; an analyst who forgets to scale reports 1e-6 of the power"
    [[mutant.change]]                     # one or more text replacements in the script
    old = "data * 1e6"
    new = "data"
    count = 1                             # how many times `old` occurs (default 1)

A change whose `old` text does not occur exactly `count` times is an error naming the task,
the mutant and the change, so a mutant never silently turns into the reference script when
the script is edited. runner/benchmark/sensitivity.py runs them and scores their answers.
"""
from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from validation.errors import UserError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MUTANTS_DIR = Path("reference_scripts/mutants")
MIN_MUTANTS = 3  # issue #31: at least three plausible wrong pipelines per task

Mistake = Literal["unit", "channel", "reference", "window", "off_by_one", "coding", "baseline",
                  "bad_channels", "band", "events", "statistics", "method", "other"]


class MutantError(UserError, ValueError):
    """A mutant file that cannot be read or applied; the message names the task and the mutant."""


class Change(BaseModel):
    """One text replacement in the reference script."""
    model_config = ConfigDict(extra="forbid")
    old: str = Field(min_length=1)
    new: str
    count: int = Field(default=1, ge=1)

    @model_validator(mode="after")
    def _changes_something(self) -> "Change":
        if self.old == self.new:
            raise ValueError("old and new are the same text")
        return self


class Mutant(BaseModel):
    """A plausible wrong analysis: what kind of mistake, why an analyst makes it, and the edit."""
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[a-z0-9_]+$")
    mistake: Mistake
    why: str = Field(min_length=10)
    change: list[Change] = Field(min_length=1)


class MutantFile(BaseModel):
    """A task's mutant file: its mutants, each name once."""
    model_config = ConfigDict(extra="forbid")
    mutant: list[Mutant] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_names(self) -> "MutantFile":
        names = [m.name for m in self.mutant]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"mutant name(s) repeated: {', '.join(repeated)}")
        return self


def mutants_path(project_root: Path, task_id: str) -> Path:
    """Where a task's mutant file lives."""
    return Path(project_root) / MUTANTS_DIR / f"{task_id}.toml"


def tasks_with_mutants(project_root: Path) -> list[str]:
    """Task ids that have a mutant file, sorted."""
    return sorted(p.stem for p in (Path(project_root) / MUTANTS_DIR).glob("*.toml"))


def load_mutants(project_root: Path, task_id: str) -> list[Mutant]:
    """A task's mutants, validated; [] when it has no mutant file."""
    path = mutants_path(project_root, task_id)
    if not path.is_file():
        return []
    try:
        raw = tomllib.loads(path.read_text())
        return MutantFile.model_validate(raw).mutant
    except tomllib.TOMLDecodeError as exc:
        raise MutantError(f"{path}: not valid TOML: {exc}") from None
    except ValidationError as exc:
        fields = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or '(file)'}: {err['msg']}"
                           for err in exc.errors())
        raise MutantError(f"{path}: invalid mutant file ({fields})") from None


def mutant_source(task_id: str, mutant: Mutant, script_text: str) -> str:
    """The reference script with the mutant's changes applied, in order."""
    text = script_text
    for index, change in enumerate(mutant.change):
        found = text.count(change.old)
        if found != change.count:
            raise MutantError(f"{task_id}: mutant {mutant.name}: change {index} expects {change.count} "
                              f"occurrence(s) of {_excerpt(change.old)} in the script, found {found}")
        text = text.replace(change.old, change.new)
    if text == script_text:
        raise MutantError(f"{task_id}: mutant {mutant.name}: its changes leave the script as it was")
    return text


def source_sha256(text: str) -> str:
    """sha256 of a (mutant) script's text."""
    return hashlib.sha256(text.encode()).hexdigest()


def _excerpt(text: str, limit: int = 60) -> str:
    line = re.sub(r"\s+", " ", text).strip()
    return repr(line if len(line) <= limit else line[: limit - 3] + "...")
