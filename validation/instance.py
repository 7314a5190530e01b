"""The instance file: BrainBench's case format plus eegbench's own fields.

An instance file is JSON with four parts. `meta_info`, `agent_input` and `eval_config`
follow BrainBench's case files (so official cases load unchanged); `reference` is ours:
which script and parameters produced the ground truth and the sha256 of every input.
Only `agent_input` ever reaches the sandbox or the model.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

import validation.builtin_units  # noqa: F401 (importing it registers the built-in units)
from validation import unit_registry
from validation.errors import InstanceError

SUBSETS = (
    "Foundational Analysis",
    "Sleep Assessment",
    "Neurocognitive Assessment",
    "Physiological Integration",
)
# EEGAgentBench (the second published protocol): its own subset, never in the default set.
AGENTBENCH_SUBSET = "EEGAgentBench"
ALL_SUBSETS = SUBSETS + (AGENTBENCH_SUBSET,)
SANDBOX_INPUT_ROOT = "/input"


class MetaInfo(BaseModel):
    """The case's identity: case id, subset, task, difficulty, source dataset."""
    model_config = ConfigDict(extra="allow")
    case_id: str
    bench_subset: str
    difficult: str | int | None = None
    original_dataset: str | None = None
    task_id: str | None = None
    difficulty: Literal["easy", "medium", "hard"] | None = None


class AgentInput(BaseModel):
    """What the model sees. Paths are relative to the data root."""

    model_config = ConfigDict(extra="allow")
    data_path: str | list[str]
    label_path: str | list[str] | None = None
    instruction: str

    def input_paths(self) -> list[str]:
        """All input files (data then labels), relative to the data root."""
        return _as_list(self.data_path) + _as_list(self.label_path)


class MetricSpec(BaseModel):
    """One validation unit. `params.ground_truth` holds the reference target."""

    model_config = ConfigDict(extra="allow")
    metric_id: str
    type: str
    target_key: str
    weight: float = Field(ge=0)
    params: dict[str, Any] = Field(default_factory=dict)

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        # Read at validation time, so a unit registered later (a test's toy unit) is known.
        if not unit_registry.is_registered(value):
            raise ValueError(f"unknown metric type {value!r}; expected one of {unit_registry.names()}")
        return value


class EvalConfig(BaseModel):
    """How the report is scored: the parser prompt and the metrics."""
    model_config = ConfigDict(extra="allow")
    parser_prompt: str = ""
    metrics: list[MetricSpec]

    def target_keys(self) -> list[str]:
        """The fields the parser extracts, in first-seen order (full_text is the report itself)."""
        keys = [m.target_key for m in self.metrics if m.target_key != "full_text"]
        return list(dict.fromkeys(keys))


class Reference(BaseModel):
    """How the ground truth was made: enough to regenerate and audit it."""

    script: str  # path relative to the project root, e.g. reference_scripts/alpha_relpower.py
    script_sha256: str
    params: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, str] = Field(default_factory=dict)  # data-root-relative path -> sha256
    versions: dict[str, str] = Field(default_factory=dict)


class Instance(BaseModel):
    """One instance file: meta_info, agent_input, eval_config and reference."""
    model_config = ConfigDict(extra="allow")
    meta_info: MetaInfo
    agent_input: AgentInput
    eval_config: EvalConfig
    reference: Reference | None = None

    @property
    def case_id(self) -> str:
        """The instance's case id."""
        return self.meta_info.case_id

    @property
    def task_id(self) -> str:
        """The instance's task id (from meta_info, else the case id without its last part)."""
        return self.meta_info.task_id or self.meta_info.case_id.rsplit("-", 1)[0]

    def sandbox_inputs(self) -> list[str]:
        """Input paths as the model sees them inside the sandbox."""
        return [sandbox_path(p) for p in self.agent_input.input_paths()]


def sandbox_path(relative: str) -> str:
    """Where a data-root-relative input appears inside the sandbox."""
    return f"{SANDBOX_INPUT_ROOT}/{relative.lstrip('/')}"


def load_instance(path: Path) -> Instance:
    """Read and validate one instance file; errors name the file and the field."""
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InstanceError(f"{path}: cannot read instance file: {exc}") from exc
    try:
        return Instance.model_validate(raw)
    except ValidationError as exc:
        fields = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise InstanceError(f"{path}: invalid instance ({fields})") from exc


def dump_instance(instance: Instance) -> str:
    """Canonical JSON text of an instance: stable key order, so regeneration is byte-identical."""
    data = instance.model_dump(mode="json", exclude_none=True)
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _as_list(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)
