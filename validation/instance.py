"""The instance file: BrainBench's case format plus eegbench's own fields.

An instance file is JSON with four parts. `meta_info`, `agent_input` and `eval_config`
follow BrainBench's case files (so official cases load unchanged); `reference` is ours:
which script and parameters produced the ground truth and the sha256 of every input.
Only `agent_input` ever reaches the sandbox or the model.
"""
from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

import validation.builtin_units  # noqa: F401 (importing it registers the built-in units)
from validation.errors import InstanceError, MetricConfigError, describe_validation_errors, short_value
from validation.unit_registry import UNITS

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
UNSAFE_CASE_ID = re.compile(r"[/\\\x00-\x1f\x7f]|^\s|\s$")
# A unit's MetricConfigError that starts with the param it is about ("params.tolerance must
# be ...", "ground_truth must be ...", "validator_config.x.weight must be ..."): that param
# is then the field the message names.
_PARAM_PREFIX = re.compile(r"^(params\.[A-Za-z_][\w.]*|validator_config\.[\w.]+|ground_truth)\b\s*(.*)$", re.S)


Level = Literal["easy", "medium", "hard"]
# BrainBench's runner weighs each instance's score by its numeric `meta_info.difficult`;
# eegbench writes a level's number there (and the word in `difficulty`).
DIFFICULTY_LEVELS: dict[str, int] = {"easy": 1, "medium": 2, "hard": 3}
_LEVEL_OF_NUMBER: dict[float, Level] = {1: "easy", 2: "medium", 3: "hard"}
# How a task asks: a recipe names the method; an open task states the scientific goal and
# leaves the method to the agent (ground truth from a method ensemble); a long-horizon task
# is a whole pipeline scored at several points.
TaskKind = Literal["recipe", "open", "long_horizon"]
TASK_KINDS: tuple[str, ...] = ("recipe", "open", "long_horizon")


def check_subset(value: str) -> str:
    """A subset name of ALL_SUBSETS (ValueError otherwise). The subset groups the report and
    picks the set a run selects: an unknown one would make a group that no SET names."""
    if value not in ALL_SUBSETS:
        raise ValueError(f"unknown subset {short_value(value)}; expected one of {', '.join(ALL_SUBSETS)}")
    return value


class MetaInfo(BaseModel):
    """The case's identity: case id, subset, task, difficulty, source dataset."""
    model_config = ConfigDict(extra="allow")
    case_id: str
    bench_subset: str
    difficult: str | int | float | None = None  # BrainBench: a per-case weight (older files: a label)
    original_dataset: str | None = None
    task_id: str | None = None
    difficulty: Level | None = None
    kind: TaskKind | None = None  # ours: how the task asks (recipe, open goal, long pipeline)

    @model_validator(mode="after")
    def _level_from_difficult(self) -> "MetaInfo":
        # Official case files carry only `difficult`: its 1, 2, 3 (or a level's name) is the level.
        if self.difficulty is not None:
            return self
        if isinstance(self.difficult, (int, float)):
            self.difficulty = _LEVEL_OF_NUMBER.get(self.difficult)
        elif self.difficult in DIFFICULTY_LEVELS:
            self.difficulty = self.difficult  # type: ignore[assignment]  # checked just above
        return self

    @field_validator("bench_subset")
    @classmethod
    def _known_subset(cls, value: str) -> str:
        return check_subset(value)

    @field_validator("case_id")
    @classmethod
    def _usable_case_id(cls, value: str) -> str:
        # The case id names the instance's directory in a run: it must be one path component.
        if not value.strip() or value in (".", "..") or UNSAFE_CASE_ID.search(value):
            raise ValueError(f"expected a case id usable as a folder name (no '/', '\\', control "
                             f"characters or surrounding spaces), got {short_value(value)}")
        return value


class AgentInput(BaseModel):
    """What the model sees. Paths are relative to the data root."""

    model_config = ConfigDict(extra="allow")
    data_path: str | list[str]
    label_path: str | list[str] | None = None
    instruction: str

    @field_validator("data_path", "label_path")
    @classmethod
    def _relative_paths(cls, value: str | list[str] | None) -> str | list[str] | None:
        # Inputs are bound into the sandbox from under the data root: an absolute path or a
        # '..' would reach host files outside it.
        for path in _as_list(value):
            parts = PurePosixPath(path).parts
            if not path.strip() or path.startswith("/") or ".." in parts:
                raise ValueError(f"expected a path relative to the data root (no leading '/', no '..'), "
                                 f"got {short_value(path)}")
        return value

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
        if value not in UNITS:
            raise ValueError(f"unknown metric type {value!r}; expected one of {UNITS.names()}")
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
    # metric id -> {pipeline: value}: the method ensemble a metric's ground truth came from
    ensembles: dict[str, dict[str, Any]] | None = None


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
    """Read and validate one instance file: its JSON, its fields, and every metric's params
    (each unit's own check). InstanceError names the file and the field at fault."""
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise InstanceError(f"{path}: expected a JSON object with meta_info, agent_input and "
                            f"eval_config, got {type(raw).__name__} {short_value(raw)}")
    try:
        instance = Instance.model_validate(raw)
    except ValidationError as exc:
        raise InstanceError(f"{path}: {describe_validation_errors(exc.errors())}") from None
    check_metric_params(path, instance)
    return instance


def read_json(path: Path) -> Any:
    """A file's JSON value; InstanceError names the file and the line when it is not JSON."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise InstanceError(f"{path}: cannot read instance file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InstanceError(f"{path}: not UTF-8 text (byte {exc.start}): not an instance file") from None
    if not text.strip():
        raise InstanceError(f"{path}: empty file, expected a JSON object") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise InstanceError(f"{path}: JSON nested too deeply to be an instance file") from None


def check_metric_params(path: Path | str, instance: Instance) -> None:
    """Every metric's params pass its unit's check, so a broken instance fails when it is
    loaded, not half way through a run."""
    for index, spec in enumerate(instance.eval_config.metrics):
        try:
            UNITS.get(spec.type).check_params(spec.params)
        except MetricConfigError as exc:
            field, problem = _param_field(f"eval_config.metrics[{index}]", spec.params, str(exc))
            raise InstanceError(f"{path}: field '{field}' (metric {spec.metric_id}, {spec.type}): {problem}") from None


def _param_field(metric: str, params: dict[str, Any], message: str) -> tuple[str, str]:
    """(the field a unit's message is about, the rest of the message)."""
    found = _PARAM_PREFIX.match(message)
    if found is None:
        return f"{metric}.params", message
    name, rest = found.groups()
    if name == "ground_truth" and "ground_truth" not in params and "gt_value" in params:
        name = "gt_value"  # BrainBench's spelling of the same field
    if not name.startswith("params."):
        name = f"params.{name}"
    return f"{metric}.{name}", rest


def dump_instance(instance: Instance) -> str:
    """Canonical JSON text of an instance: stable key order, so regeneration is byte-identical."""
    data = instance.model_dump(mode="json", exclude_none=True)
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _as_list(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)
