"""RunConfig: every setting of a run, recorded in run.json and checked on resume."""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from runner.sandbox.base import Limits
from runner.scoring.scorer import ScoringSettings

PARADIGMS = ("codeact", "tools", "hybrid")


class ControlLimits(BaseModel):
    """The CodeAct interaction controls (BrainBench Table 9)."""

    max_rounds: int = Field(20, ge=1)
    exec_timeout_s: float = Field(150.0, gt=0)
    grace_s: float = Field(5.0, ge=0)
    deadline_s: float = Field(720.0, gt=0)
    repeat_limit: int = Field(3, ge=1)  # same code sha256 or same error fingerprint N times
    max_no_action: int = Field(3, ge=1)  # replies with neither <execute> nor <solution>
    output_budget_chars: int = Field(8000, ge=200)
    # The tools paradigm (EEGAgentBench §3.2, §6.5): max_rounds is its turn ceiling.
    max_tool_calls: int = Field(999, ge=1)
    tool_budget_tokens: int = Field(8000, ge=100)  # tool-output budget, ~4 characters a token
    tool_calling: Literal["auto", "text"] = "auto"  # auto: native function calling if supported


class ResourceLimits(BaseModel):
    memory_mb: int = Field(4096, ge=128)
    pids: int = Field(256, ge=16)
    cpus: float = Field(1.0, gt=0)


class ModelSettings(BaseModel):
    temperature: float = 0.0
    max_tokens: int | None = Field(None, ge=1)  # None: the model kind's default
    stop: list[str] | None = None
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(5, ge=0)


class RunConfig(BaseModel):
    run_id: str
    model: str
    paradigm: Literal["codeact", "tools", "hybrid"] = "codeact"
    selection: list[str] = Field(default_factory=list)  # SET=: subsets, tasks or case ids
    jobs: int = Field(1, ge=1)
    sandbox: Literal["auto", "local", "docker"] = "local"  # auto: docker when usable, else local
    warm_pool: bool = False  # start the next instance's sandbox while the current one runs
    controls: ControlLimits = Field(default_factory=ControlLimits)
    resources: ResourceLimits = Field(default_factory=ResourceLimits)
    model_settings: ModelSettings = Field(default_factory=ModelSettings)
    scoring: ScoringSettings = Field(default_factory=ScoringSettings)
    # BrainBench case files run unchanged: instances from this folder, inputs under data_root.
    cases_dir: str | None = None
    data_root: str | None = None

    def sandbox_limits(self) -> Limits:
        return Limits(
            memory_mb=self.resources.memory_mb,
            pids=self.resources.pids,
            cpus=self.resources.cpus,
            exec_timeout_s=self.controls.exec_timeout_s,
            grace_s=self.controls.grace_s,
            output_budget_chars=self.controls.output_budget_chars,
        )

    def resume_key(self) -> dict:
        """Settings that must match for a rerun to resume this run (jobs and the pool may change)."""
        return self.model_dump(mode="json", exclude={"jobs", "warm_pool"})


def default_run_id(model: str, paradigm: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", Path(model).name if "/" in model else model).strip("-")
    return f"{slug or 'model'}-{paradigm}-{time.strftime('%Y%m%d-%H%M%S')}"


def check_run_id(run_id: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", run_id):
        raise ValueError(
            f"RUN={run_id!r}: use letters, digits, '.', '_' and '-' (at most 100 characters)"
        )
    return run_id
