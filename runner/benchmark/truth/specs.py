"""Task specs (instances/tasks/<task_id>.json): the instruction template, the metrics and the
bindings a task's instances are made from; the errors ground truth ends with."""
from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from runner.benchmark import ensemble as ensembles
from runner.benchmark.datasets.needs import LocalRules
from runner.benchmark.ensemble import EnsembleRule
from runner.benchmark.variants.rules import VariantRules
from validation.errors import UserError
from validation.instance import (
    ALL_SUBSETS,
    AgentInput,
    MetricSpec,
    TaskKind,
    check_subset,
)
from validation.unit import TRUTH_KEYS
from validation.unit_registry import UNITS

TASKS_DIR = Path("instances/tasks")
MANIFESTS_DIR = Path("instances/manifests")
SUBSET_SLUGS = {subset: subset.lower().replace(" ", "_") for subset in ALL_SUBSETS}
SUBSET_PREFIXES = {
    "Foundational Analysis": "fa_",
    "Sleep Assessment": "sa_",
    "Neurocognitive Assessment": "nc_",
    "Physiological Integration": "pi_",
    "EEGAgentBench": "eab_",
}

class TruthError(UserError, RuntimeError):
    """Ground truth could not be made; the message names the task file, case or field."""


class BindingRejected(TruthError):
    """A binding whose method ensemble cannot separate right from wrong: it makes no instance."""


# --- task specs ------------------------------------------------------------------------


class TaskMetric(MetricSpec):
    """One metric of a spec: an instance metric without its ground truth. Besides the
    fields below it may carry free-text `*_reason` fields (e.g. `rule_reason` for a set or
    sequence rule); they are copied to the instance. A params its unit lists in
    `reasoned_params` (numeric_check: tolerance) must be a number with a `<name>_reason`."""

    tolerance_reason: str | None = None
    # The script result key holding the ground truth, when it differs from target_key: an
    # artifact metric reads the reported path (target_key) but is checked against the
    # file's expected properties.
    truth_key: str | None = None
    # Ground truth from several pipelines (runner/benchmark/ensemble.py): the tolerance is then derived
    # from their spread, not written.
    ensemble: EnsembleRule | None = None
    # Kept on a binding only when the script's result has each key with this value (e.g. a
    # value asked for only when the request is valid); the weights left are rescaled to 1.
    when: dict[str, Any] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _tolerance_explained(self) -> "TaskMetric":
        for name, value in (self.model_extra or {}).items():
            if not name.endswith("_reason") or not isinstance(value, str):
                raise ValueError(f"unknown field {name!r} (only free-text '*_reason' fields "
                                 "may be added to a metric)")
        if self.ensemble is not None:
            ensembles.check_rule(self.ensemble, self.type)
            if "tolerance" in self.params:
                raise ValueError("params.tolerance is derived from the ensemble's spread, not written")
        for param in UNITS.get(self.type).reasoned_params:  # type: validated above
            if self.ensemble is None and not isinstance(self.params.get(param), (int, float)):
                raise ValueError(f"{self.type} needs a numeric params.{param}")
            if not self._reason(param):
                raise ValueError(f"{self.type} needs a {param}_reason")
        for key in TRUTH_KEYS:
            if key in self.params:
                raise ValueError(f"params.{key} is computed by the reference script, not written")
        return self

    def _reason(self, param: str) -> str | None:
        reason = getattr(self, f"{param}_reason", None)  # a declared field or a free-text extra
        return reason if isinstance(reason, str) else None


class Binding(BaseModel):
    """One case of a task: its input files and the parameters its instruction and script get."""
    model_config = ConfigDict(extra="forbid")
    case: str = Field(pattern=r"^[A-Za-z0-9_]+$")
    data_path: str | list[str]
    label_path: str | list[str] | None = None
    params: dict[str, Any] = Field(default_factory=dict)

    def input_paths(self) -> list[str]:
        """Data then label files, relative to the data root: the script's `inputs` order."""
        return AgentInput(data_path=self.data_path, label_path=self.label_path,
                          instruction="").input_paths()


class BlindValidation(BaseModel):
    """A blind solve of the task: someone who saw only the instruction and the inputs (never
    the reference script or an instance file) solved it, or did not, on the cases named."""
    model_config = ConfigDict(extra="forbid")
    solved: bool  # reached the ground truth on every deterministic unit of every case named
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    cases: list[str] = Field(min_length=2)
    notes: str  # what the solver found ambiguous, and what was changed for it


class TaskSpec(BaseModel):
    """A task spec (instances/tasks/<task_id>.json): instruction, metrics, script and bindings."""
    model_config = ConfigDict(extra="forbid")
    task_id: str = Field(pattern=r"^(fa|sa|nc|pi|eab)_[a-z0-9_]+$")
    bench_subset: str
    difficulty: Literal["easy", "medium", "hard"]
    difficulty_reason: str
    kind: TaskKind
    original_dataset: str
    script: str
    instruction: str
    parser_prompt: str
    metrics: list[TaskMetric] = Field(min_length=1)
    bindings: list[Binding] = Field(min_length=1)
    blind_validation: BlindValidation | None = None
    local: LocalRules | None = None  # binding to local datasets (runner/datasets)
    variants: VariantRules | None = None  # leak-resistant variants (runner/variants)

    @field_validator("bench_subset")
    @classmethod
    def _known_subset(cls, value: str) -> str:
        return check_subset(value)

    @field_validator("script")
    @classmethod
    def _relative_script(cls, value: str) -> str:
        if value.startswith("/") or ".." in Path(value).parts or not value.endswith(".py"):
            raise ValueError(f"script must be a project-relative .py path, got {value!r}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> "TaskSpec":
        prefix = SUBSET_PREFIXES[self.bench_subset]
        if not self.task_id.startswith(prefix):
            raise ValueError(f"task_id of a {self.bench_subset} task must start with {prefix!r}")
        total = sum(m.weight for m in self.metrics)
        if abs(total - 1.0) > 1e-9:
            raise ValueError(f"metrics: weights sum to {total}, not 1")
        _unique("metrics", [m.metric_id for m in self.metrics])
        _unique("bindings", [b.case for b in self.bindings])
        if self.blind_validation is not None:
            unknown = set(self.blind_validation.cases) - {self.case_id(b) for b in self.bindings}
            if unknown:
                raise ValueError(f"blind_validation.cases: not cases of this task: {sorted(unknown)}")
        names = _placeholders(self.instruction)
        for index, binding in enumerate(self.bindings):
            missing = names - set(binding.params)
            if missing:
                raise ValueError(
                    f"bindings.{index} (case {binding.case}): params lack instruction "
                    f"placeholder(s) {sorted(missing)}"
                )
        return self

    @property
    def subset_slug(self) -> str:
        """The folder name of the task's subset under instances/."""
        return SUBSET_SLUGS[self.bench_subset]

    def case_id(self, binding: Binding) -> str:
        """The case id of one binding's instance: <task_id>-<case>."""
        return f"{self.task_id}-{binding.case}"


def load_task(path: Path) -> TaskSpec:
    """Read and validate one task spec; errors name the file and the field."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise TruthError(f"{path}: cannot read task spec: {exc}") from exc
    try:
        task = TaskSpec.model_validate(raw)
    except ValidationError as exc:
        fields = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(spec)'}: {err['msg']}"
            for err in exc.errors()
        )
        raise TruthError(f"{path}: invalid task spec ({fields})") from exc
    if path.stem != task.task_id:
        raise TruthError(f"{path}: task_id {task.task_id!r} differs from the file name")
    return task


def load_tasks(project_root: Path, tasks: list[str] | None = None) -> list[TaskSpec]:
    """All task specs (sorted by id), or only the named ones (each must exist)."""
    folder = Path(project_root) / TASKS_DIR
    if tasks:
        paths = [folder / f"{task_id}.json" for task_id in dict.fromkeys(tasks)]
        missing = [p for p in paths if not p.is_file()]
        if missing:
            raise TruthError(f"no task spec {', '.join(str(p) for p in missing)}")
    else:
        paths = sorted(folder.glob("*.json"))
    return [load_task(p) for p in paths]


def instance_path(project_root: Path, task: TaskSpec, binding: Binding) -> Path:
    """Where one binding's instance file lives."""
    return Path(project_root) / "instances" / task.subset_slug / f"{task.case_id(binding)}.json"



def _unique(field: str, values: list[str]) -> None:
    seen = set()
    for value in values:
        if value in seen:
            raise ValueError(f"{field}: duplicate id {value!r}")
        seen.add(value)


def _placeholders(template: str) -> set[str]:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(f"instruction: bad placeholder syntax ({exc}); write literal braces as {{{{ }}}}") from None
    names = set()
    for _, name, _, _ in parsed:
        if name is None:
            continue
        base = name.split(".")[0].split("[")[0]
        if not base or base.isdigit():
            raise ValueError(f"instruction: placeholders must be named, got {{{name}}}")
        names.add(base)
    return names
