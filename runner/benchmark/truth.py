"""Ground truth: task spec + reference script + recordings -> instance files.

A task spec (`instances/tasks/<task_id>.json`) holds an instruction template, the metrics and
a list of bindings (input files + parameters). For every binding the task's reference script
(`run(inputs, params) -> dict`) computes the targets; the instance file written to
`instances/<subset_slug>/<task_id>-<case>.json` carries them as each metric's
`params.ground_truth`, plus the sha256 of the script and of every input and the versions of
the libraries the script depends on, so `check` can prove the committed files are what the
scripts make today.

Scripts always run in spawned worker processes with BLAS/OpenMP pinned to one thread (set
before numpy is first imported there), so results do not depend on the caller's process.

`generate` caches each script result under <project>/.cache/truth/, keyed by everything the
result may depend on (input sha256s, script sha256, parameters, library versions): a rerun only
runs the scripts of bindings that changed. The cache lives in the project, not in the data
root, because the data root is what sandboxes read and the entries are ground truth. `check`
never reads the cache: it proves the scripts still give the committed files.
Both also keep instances/manifests/<subset_slug>.json (counts and instance-set hash per
subset) in step with the instance files.
"""
from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import math
import multiprocessing
import os
import string
import sys
import sysconfig
import tempfile
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
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
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from runner.benchmark import catalog
from runner.benchmark import ensemble as ensembles
from runner.benchmark.datasets.needs import LocalRules
from runner.benchmark.ensemble import EnsembleRule
from runner.benchmark.variants.rules import VariantRules
from runner.core.fileio import progress_bar, sha256_file, write_atomic
from runner.core.paths import Paths
from runner.sandbox import jit_cache, kernel_jit
from validation import unit_registry
from validation.errors import MetricConfigError, UserError
from validation.instance import (
    ALL_SUBSETS,
    DIFFICULTY_LEVELS,
    SUBSETS,  # noqa: F401 (re-exported: the four BrainBench subsets)
    AgentInput,
    EvalConfig,
    Instance,
    MetaInfo,
    MetricSpec,
    Reference,
    TaskKind,
    check_subset,
    dump_instance,
)
from validation.unit import GT_KEY, TRUTH_KEYS
from validation.worker_lifetime import die_with_parent

log = logging.getLogger(__name__)
_COLUMNS = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())

TASKS_DIR = Path("instances/tasks")
MANIFESTS_DIR = Path("instances/manifests")
CACHE_DIR = Path(".cache/truth")
CACHE_FORMAT = 1  # bump when the meaning of a cached entry changes
SUBSET_SLUGS = {subset: subset.lower().replace(" ", "_") for subset in ALL_SUBSETS}
SUBSET_PREFIXES = {
    "Foundational Analysis": "fa_",
    "Sleep Assessment": "sa_",
    "Neurocognitive Assessment": "nc_",
    "Physiological Integration": "pi_",
    "EEGAgentBench": "eab_",
}
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
# Libraries whose versions can change a result, beyond those a script imports itself.
RESULT_DEPENDENCIES = {
    "scipy": ("numpy",),
    "pandas": ("numpy",),
    "h5py": ("numpy",),
    "mne": ("numpy", "scipy"),
    "yasa": ("numpy", "scipy", "pandas", "mne", "lightgbm", "scikit-learn", "antropy"),
}
MODULE_DISTRIBUTIONS = {"sklearn": "scikit-learn"}


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
        for param in unit_registry.get(self.type).reasoned_params:  # type: validated above
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


# --- one instance ----------------------------------------------------------------------


def build_instance(task: TaskSpec, binding: Binding, project_root: Path, data_root: Path) -> Instance:
    """Run the task's reference script on one binding (in this process) and build the instance.

    Callers that need determinism guarantees use `generate`/`check`, which call this in a
    fresh worker with pinned thread counts.
    """
    reference = provenance(task, binding, project_root, data_root)
    result = run_binding(task, binding, project_root, data_root)
    return assemble_instance(task, binding, reference, result)


def provenance(task: TaskSpec, binding: Binding, project_root: Path, data_root: Path) -> Reference:
    """The instance's `reference` block: script, its sha256, params, input sha256s, versions.

    Everything a script result may depend on, so it is also the result's cache key."""
    project_root, data_root = Path(project_root), Path(data_root)
    case_id = task.case_id(binding)
    script = project_root / task.script
    if not script.is_file():
        raise TruthError(f"{case_id}: reference script {task.script} not found")
    relative_inputs = binding.input_paths()
    inputs = [data_root / p for p in relative_inputs]
    absent = [str(p) for p in inputs if not p.is_file()]
    if absent:
        raise TruthError(f"{case_id}: input(s) missing under {data_root}: {', '.join(absent)} "
                         "(run `make data`)")
    script_sha = _sha256(script)
    return Reference(
        script=task.script,
        script_sha256=script_sha,
        params=binding.params,
        inputs={rel: _sha256(path) for rel, path in zip(relative_inputs, inputs)},
        versions=_versions_of(script, script_sha),
    )


def run_binding(task: TaskSpec, binding: Binding, project_root: str | Path, data_root: str | Path) -> dict[str, Any]:
    """The reference script's result for one binding (JSON types only)."""
    inputs = [str(Path(data_root) / p) for p in binding.input_paths()]
    return run_script(task.case_id(binding), Path(project_root) / task.script, inputs, binding.params)


def assemble_instance(task: TaskSpec, binding: Binding, reference: Reference, result: dict[str, Any]) -> Instance:
    """The instance file of one binding from its provenance and its script's result."""
    case_id = task.case_id(binding)
    kept = _applying_metrics(case_id, task.metrics, result)
    found = {m.metric_id: _ensemble_truth(case_id, m, result) for m in kept if m.ensemble is not None}
    metrics = [_metric_with_truth(case_id, metric, result, binding.params, found.get(metric.metric_id))
               for metric in kept]
    if found:
        reference = reference.model_copy(update={"ensembles": {k: v.values for k, v in found.items()}})
    return Instance(
        meta_info=MetaInfo(
            case_id=case_id,
            task_id=task.task_id,
            bench_subset=task.bench_subset,
            difficulty=task.difficulty,
            difficult=DIFFICULTY_LEVELS[task.difficulty],
            original_dataset=task.original_dataset,
            kind=task.kind,
        ),
        agent_input=AgentInput(
            data_path=binding.data_path,
            label_path=binding.label_path,
            instruction=task.instruction.format(**binding.params),
        ),
        eval_config=EvalConfig(parser_prompt=task.parser_prompt, metrics=metrics),
        reference=reference,
    )


def run_script(case_id: str, script: Path, inputs: list[str], params: dict[str, Any]) -> dict[str, Any]:
    """A reference script's `run(inputs, params)` result (JSON types only); TruthError naming
    the case when it fails or returns something else. Also runs mutants (runner/benchmark/sensitivity.py)."""
    # A fresh module per call: nothing a previous binding left in module state leaks in.
    spec = importlib.util.spec_from_file_location(f"_eegbench_ref_{script.stem}", script)
    if spec is None or spec.loader is None:  # TaskSpec only admits .py scripts
        raise TruthError(f"{case_id}: {script.name} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    cwd = os.getcwd()
    try:
        with tempfile.TemporaryDirectory(prefix="eegbench-truth-") as scratch:
            os.chdir(scratch)  # a script that writes relative paths writes in a temp dir
            spec.loader.exec_module(module)
            result = module.run(list(inputs), json.loads(json.dumps(params)))
    except Exception as exc:
        tail = "".join(traceback.format_exception(exc)[-6:]).rstrip()
        raise TruthError(f"{case_id}: {script.name} failed: {type(exc).__name__}: {exc}\n{tail}") from None
    finally:
        os.chdir(cwd)
    if not isinstance(result, dict):
        raise TruthError(f"{case_id}: {script.name} returned {type(result).__name__}, not a dict")
    try:
        plain: dict[str, Any] = json.loads(json.dumps(result, allow_nan=False))
        return plain
    except (TypeError, ValueError) as exc:
        raise TruthError(f"{case_id}: {script.name} returned a non-JSON value: {exc}") from None


def _applying_metrics(case_id: str, metrics: list[TaskMetric], result: dict[str, Any]) -> list[TaskMetric]:
    """The metrics whose `when` the script's result meets, their weights rescaled to sum to 1
    (an instance's weights always do, as BrainBench's total expects)."""
    for metric in metrics:
        missing = sorted(set(metric.when or {}) - set(result))
        if missing:
            raise TruthError(f"{case_id}: metric {metric.metric_id}: when names {missing}, "
                             f"which the script did not return (it returned {sorted(result)})")
    kept = [m for m in metrics if all(result[k] == v for k, v in (m.when or {}).items())]
    total = sum(m.weight for m in kept)
    if total <= 0:
        raise TruthError(f"{case_id}: no metric with weight applies to this result "
                         f"(every metric's when excludes it)")
    if len(kept) == len(metrics):
        return kept
    return [m.model_copy(update={"weight": round(m.weight / total, 6)}) for m in kept]


def _script_value(case_id: str, metric: TaskMetric, result: dict[str, Any]) -> Any:
    """What the script returned for the metric (under truth_key, else target_key)."""
    key = metric.truth_key or metric.target_key
    if key not in result:
        raise TruthError(f"{case_id}: script result lacks {key!r} "
                         f"(metric {metric.metric_id}); it returned {sorted(result)}")
    return result[key]


def _ensemble_truth(case_id: str, metric: TaskMetric, result: dict[str, Any]) -> ensembles.EnsembleTruth:
    """The metric's ground truth from the pipelines' values (EnsembleRejected: none here)."""
    assert metric.ensemble is not None
    try:
        return ensembles.resolve(metric.ensemble, metric.type, _script_value(case_id, metric, result))
    except ensembles.EnsembleRejected as exc:
        raise BindingRejected(f"{case_id}: metric {metric.metric_id}: {exc}") from None
    except ValueError as exc:
        raise TruthError(f"{case_id}: metric {metric.metric_id}: {exc}") from None


def _metric_with_truth(case_id: str, metric: TaskMetric, result: dict[str, Any],
                       binding_params: dict[str, Any] | None = None,
                       ensemble_truth: ensembles.EnsembleTruth | None = None) -> MetricSpec:
    params = dict(metric.params)
    bound = binding_params or {}
    # `binding_params` names per-binding values the unit needs besides the ground truth
    # (e.g. a question's option texts); they are copied from the binding's params.
    for name in params.pop("binding_params", []):
        if name not in bound:
            raise TruthError(f"{case_id}: metric {metric.metric_id} needs binding param {name!r}")
        params[name] = bound[name]
    if metric.target_key != "full_text":
        value = ensemble_truth.value if ensemble_truth is not None else _script_value(case_id, metric, result)
        if ensemble_truth is not None and ensemble_truth.tolerance is not None:
            params["tolerance"] = ensemble_truth.tolerance
        expected = unit_registry.get(metric.type).ground_truth_types
        if expected and (isinstance(value, bool) or not isinstance(value, expected)):
            raise TruthError(f"{case_id}: metric {metric.metric_id} ({metric.type}) got "
                             f"ground truth {value!r} of type {type(value).__name__}")
        if isinstance(value, float) and not math.isfinite(value):
            raise TruthError(f"{case_id}: metric {metric.metric_id}: ground truth is {value}")
        params[GT_KEY] = value
    extra = dict(metric.model_extra or {})
    if metric.tolerance_reason:
        extra["tolerance_reason"] = metric.tolerance_reason
    try:  # a broken spec fails here, not when a run starts
        unit_registry.get(metric.type).check_params(params)
    except MetricConfigError as exc:
        raise TruthError(f"{case_id}: metric {metric.metric_id} ({metric.type}): {exc}") from None
    return MetricSpec(metric_id=metric.metric_id, type=metric.type, target_key=metric.target_key,
                      weight=metric.weight, params=params, **extra)


def script_versions(script: Path) -> dict[str, str]:
    """Installed versions of the third-party libraries a script's result depends on."""
    tree = ast.parse(Path(script).read_text())
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module.split(".")[0])
    dists = set()
    for module in modules - set(sys.stdlib_module_names):
        dist = MODULE_DISTRIBUTIONS.get(module, module)
        dists.add(dist)
        dists.update(RESULT_DEPENDENCIES.get(dist, ()))
    versions = {}
    for dist in sorted(dists):
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue  # e.g. a local helper module; nothing to pin
    return versions


_SHA_CACHE: dict[tuple[str, int, int], str] = {}
_VERSIONS_CACHE: dict[tuple[str, str], dict[str, str]] = {}


def _versions_of(script: Path, script_sha: str) -> dict[str, str]:
    # Reading package metadata costs ~8 ms a script; a task's bindings share one script, and
    # installed versions do not change while this process runs.
    key = (str(script.resolve()), script_sha)
    if key not in _VERSIONS_CACHE:
        _VERSIONS_CACHE[key] = script_versions(script)
    return dict(_VERSIONS_CACHE[key])


def _sha256(path: Path) -> str:
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _SHA_CACHE:
        _SHA_CACHE[key] = sha256_file(path)
    return _SHA_CACHE[key]


# --- many instances ----------------------------------------------------------------------


@dataclass
class Rendered:
    """What the selected tasks' bindings make: instance texts, and the bindings their method
    ensembles rejected (case id -> reason), so each task's kept share is on record."""

    texts: dict[Path, str]
    rejected: dict[str, str]
    specs: list[TaskSpec]


def render(project_root: Path, data_root: Path, tasks: list[str] | None = None, jobs: int = 1,
           progress: bool = True, cache_dir: Path | None = None) -> Rendered:
    """Instance file path -> canonical JSON text, for every binding of the selected tasks,
    and the bindings rejected.

    With a `cache_dir`, bindings whose cache entry exists are built from it without running
    their script, and fresh results are stored there; without one every script runs.
    """
    project_root = Path(project_root)
    specs = load_tasks(project_root, tasks)
    texts: dict[Path, str] = {}
    rejected: dict[str, str] = {}
    items = [(task, binding) for task in specs for binding in task.bindings]
    for task, binding, reference, result in _results(items, project_root, data_root, jobs, progress, cache_dir):
        _add_instance(texts, rejected, project_root, task, binding, reference, result)
    _log_kept_shares(specs, rejected)
    return Rendered(dict(sorted(texts.items())), dict(sorted(rejected.items())), specs)


@dataclass(frozen=True)
class Skipped:
    """A whole task (subject None), or one recording or case of it, that made no instance."""

    task_id: str
    subject: str | None
    reason: str


@dataclass
class Built:
    """What a local build (`truth --dataset`, `truth --variants`) wrote, and what it skipped."""

    written: list[Path] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def build_many(items: list[tuple[TaskSpec, Binding]], project_root: Path, data_root: Path, jobs: int = 1,
               progress: bool = True, cache_dir: Path | None = None) -> tuple[list[Instance], dict[str, str]]:
    """Instances of (task, binding) items built as `render` builds the committed ones (spawned
    workers with pinned threads, the result cache), and the case ids rejected with the reason:
    by a method ensemble, or by the script itself (e.g. a channel list with no clear winner)."""
    failed: dict[str, str] = {}
    instances: list[Instance] = []
    rejected: dict[str, str] = {}
    for task, binding, reference, result in _results(items, Path(project_root), data_root, jobs, progress,
                                                     cache_dir, failed):
        case_id = task.case_id(binding)
        if case_id in failed:
            rejected[case_id] = f"the reference script refused it: {failed[case_id]}"
            continue
        try:
            instances.append(assemble_instance(task, binding, reference, result))
        except BindingRejected as exc:
            rejected[case_id] = f"ensemble rejected: {_rejection(exc)}"
    return instances, rejected


def _results(items: list[tuple[TaskSpec, Binding]], project_root: Path, data_root: Path, jobs: int,
             progress: bool, cache_dir: Path | None, failures: dict[str, str] | None = None,
             ) -> list[tuple[TaskSpec, Binding, Reference, dict[str, Any]]]:
    """(task, binding, reference, script result) of every item, in order: from the cache when it
    holds the result, else from the worker pool. A script that fails stops the build, unless
    `failures` is given: then its case id gets the error there, and its result is empty."""
    references = [provenance(task, binding, project_root, data_root) for task, binding in items]
    cached = [read_cache(cache_dir, ref) if cache_dir else None for ref in references]
    pending = [(task, binding, ref) for (task, binding), ref, hit in zip(items, references, cached) if hit is None]
    fresh = iter(_run_pending(pending, project_root, data_root, jobs, progress, cache_dir, failures))
    return [(task, binding, ref, hit if hit is not None else next(fresh))
            for (task, binding), ref, hit in zip(items, references, cached)]


def write_task_folders(instances: list[Instance], folder: Path, task_ids: list[str]) -> list[Path]:
    """Write instances to folder/<task_id>/<case_id>.json (unchanged files untouched) and
    remove what an earlier build left in the folders of `task_ids`; returns the paths."""
    written: list[Path] = []
    for instance in instances:
        path = Path(folder) / str(instance.meta_info.task_id) / f"{instance.meta_info.case_id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = dump_instance(instance)
        if not path.is_file() or path.read_text() != text:
            write_atomic(path, text)
        written.append(path)
    for task_id in task_ids:
        for stale in set((Path(folder) / task_id).glob("*.json")) - set(written):
            stale.unlink()
    return written


def _add_instance(texts: dict[Path, str], rejected: dict[str, str], project_root: Path, task: TaskSpec,
                  binding: Binding, reference: Reference, result: dict[str, Any]) -> None:
    """The binding's instance text, unless its ensemble rejects it (logged and kept with the reason)."""
    try:
        instance = assemble_instance(task, binding, reference, result)
    except BindingRejected as exc:
        log.warning("binding rejected: %s", exc)
        rejected[task.case_id(binding)] = _rejection(exc)
        return
    texts[instance_path(project_root, task, binding)] = dump_instance(instance)


def _rejection(exc: BindingRejected) -> str:
    """The reason of a rejection, without the case id that leads its message."""
    return str(exc).split(": ", 1)[1]


def _log_kept_shares(specs: list[TaskSpec], rejected: dict[str, str]) -> None:
    """Per task whose ensembles rejected bindings: how many of its bindings make instances."""
    for task in specs:
        dropped = sum(task.case_id(b) in rejected for b in task.bindings)
        if dropped:
            kept = len(task.bindings) - dropped
            log.warning("task %s keeps %d of %d bindings (%.0f%%); the others were rejected above",
                        task.task_id, kept, len(task.bindings), 100 * kept / len(task.bindings))


def run_pinned(call: Callable[..., Any], calls: list[tuple[Any, ...]], jobs: int, progress: bool, label: str,
               on_result: Callable[[int, Future[Any]], Any], project_root: Path) -> list[Any]:
    """`call(*args)` for each args of `calls` in a pool of spawned workers with pinned BLAS
    threads (they die with this process), under a progress bar named `label`. The workers load
    numba code from the project's compile cache for the local backend when it is ready (`make
    setup` builds it; without it each worker compiles antropy's functions, ~9 CPU-s). Each finished
    future goes to `on_result(index, future)`, whose return value is the item's result (it may
    cache it, keep an error, or re-raise); an exception there drops the queued calls and
    propagates. Results in the order of `calls`; no worker starts when there is no call."""
    if not calls:
        return []
    results: list[Any] = [None] * len(calls)
    context = multiprocessing.get_context("spawn")
    workers = max(1, min(jobs, len(calls)))
    compiled = jit_cache.host_cache(Paths(project_root=Path(project_root)).cache_dir)
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=pin_threads,
                             initargs=(os.getpid(), str(compiled) if compiled else None)) as pool, progress_bar(progress, *_COLUMNS) as bar:
        bar_task = bar.add_task(label, total=len(calls)) if bar else None
        futures = {pool.submit(call, *args): index for index, args in enumerate(calls)}
        try:
            for future in as_completed(futures):
                index = futures[future]
                results[index] = on_result(index, future)
                if bar is not None and bar_task is not None:
                    bar.advance(bar_task)
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)  # fail fast: drop queued calls
            raise
    return results


def _run_pending(pending: list[tuple[TaskSpec, Binding, Reference]], project_root: Path, data_root: Path,
                 jobs: int, progress: bool, cache_dir: Path | None,
                 failures: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Script results of `pending` (task, binding, reference) items, in order (`run_pinned`).
    Each result is cached as soon as it arrives, so a run that fails on one binding keeps the
    others' work. A script that fails stops the run, unless `failures` is given: then its case
    id gets the error there, and its result is empty."""

    def arrived(index: int, future: Future[dict[str, Any]]) -> dict[str, Any]:
        task, binding, reference = pending[index]
        try:
            result: dict[str, Any] = future.result()  # re-raises the worker's TruthError
        except TruthError as exc:
            if failures is None:
                raise
            failures[task.case_id(binding)] = str(exc).split(": ", 1)[-1].splitlines()[0]
            return {}
        if cache_dir:
            write_cache(cache_dir, reference, result)
        return result

    calls = [(task, binding, str(project_root), str(data_root)) for task, binding, _ in pending]
    return run_pinned(run_binding, calls, jobs, progress, "ground truth", arrived, project_root)


# --- the result cache ----------------------------------------------------------------------


def default_jobs() -> int:
    """Worker processes for the reference scripts: one per CPU."""
    return os.cpu_count() or 1


def default_cache_dir(project_root: Path) -> Path:
    """The project's script-result cache (.cache/truth/)."""
    return Path(project_root) / CACHE_DIR


def cache_key(reference: Reference) -> str:
    """sha256 over what a script result depends on: input and script sha256s, parameters
    (canonical JSON), library versions, and the Python version running the script."""
    material = {
        "format": CACHE_FORMAT,
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "reference": reference.model_dump(mode="json", exclude_none=True),
    }
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def read_cache(cache_dir: Path, reference: Reference) -> dict[str, Any] | None:
    """The cached script result for this provenance, or None (absent or unreadable entry)."""
    path = Path(cache_dir) / f"{cache_key(reference)}.json"
    try:
        entry = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None  # a broken entry is a miss; the fresh result overwrites it
    result = entry.get("result") if isinstance(entry, dict) else None
    return result if isinstance(result, dict) else None


def write_cache(cache_dir: Path, reference: Reference, result: dict[str, Any]) -> None:
    """Store one script result under its provenance key."""
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    entry = {"script": reference.script, "params": reference.params, "result": result}
    write_atomic(cache_dir / f"{cache_key(reference)}.json",
                 json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n")


def generate(project_root: Path, data_root: Path, tasks: list[str] | None = None, jobs: int = 1,
             progress: bool = True, cache: bool = True, cache_dir: Path | None = None) -> list[Path]:
    """Write every instance file of the selected tasks (all when None); return their paths.

    Files whose text is unchanged are not rewritten. Instance files of the selected tasks that
    no binding produces any more (with tasks=None: any file in the subset folders) are removed.
    Script results come from the cache when `cache` (default dir: <project>/.cache/truth).
    The manifests of the subsets touched (all four with tasks=None) are rewritten from the
    instance files on disk.
    """
    project_root = Path(project_root)
    cache_dir = (cache_dir or default_cache_dir(project_root)) if cache else None
    rendered = render(project_root, data_root, tasks, jobs, progress, cache_dir)
    texts = rendered.texts
    for path, text in texts.items():
        if not path.is_file() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text)
    for stale in _managed_files(project_root, tasks) - set(texts):
        stale.unlink()
    manifests = expected_manifests(project_root, tasks, texts)
    manifests[kept_path(project_root)] = kept_text(project_root, rendered, tasks)
    for path, text in manifests.items():
        if not path.is_file() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text)
    return list(texts)


def check(project_root: Path, data_root: Path, tasks: list[str] | None = None, jobs: int = 1,
          progress: bool = True) -> list[str]:
    """Differences between the committed instance files and freshly generated ones."""
    project_root = Path(project_root)
    rendered = render(project_root, data_root, tasks, jobs, progress)
    texts = rendered.texts
    problems = []
    for path, text in texts.items():
        rel = path.relative_to(project_root)
        if not path.is_file():
            problems.append(f"missing: {rel} (generated but not on disk)")
        elif path.read_bytes() != text.encode():
            problems.append(f"differs: {rel} ({_first_difference(path.read_text(), text)})")
    for extra in sorted(_managed_files(project_root, tasks) - set(texts)):
        problems.append(f"extra: {extra.relative_to(project_root)} (no task binding makes it)")
    try:
        records = {path: (text, "subset manifest") for path, text in expected_manifests(project_root, tasks, texts).items()}
        records[kept_path(project_root)] = (kept_text(project_root, rendered, tasks), "kept-share record")
    except TruthError as exc:
        return problems + [f"manifests: cannot be computed: {exc}"]
    for path, (text, what) in records.items():
        rel = path.relative_to(project_root)
        if not path.is_file():
            problems.append(f"missing: {rel} ({what}; run `eegbench truth`)")
        elif path.read_bytes() != text.encode():
            found = _first_difference(path.read_text(), text)
            problems.append(f"differs: {rel} (stale {what}: {found})")
    return problems


# --- kept shares ----------------------------------------------------------------------------

KEPT_FILE = "kept.json"


class TaskKept(BaseModel):
    """One task's entry in instances/manifests/kept.json: its bindings, the instances they
    made, and why each binding that made none was rejected (its method ensemble)."""
    model_config = ConfigDict(extra="forbid")
    bindings: int
    instances: int
    rejected: dict[str, str] = Field(default_factory=dict)  # case id -> reason


def kept_path(project_root: Path) -> Path:
    """The record of every task's kept share."""
    return Path(project_root) / MANIFESTS_DIR / KEPT_FILE


def read_kept(project_root: Path) -> dict[str, TaskKept]:
    """Task id -> its kept share, as last written by `truth` ({} when there is no record)."""
    path = kept_path(project_root)
    try:
        raw = json.loads(path.read_text())
        return {task: TaskKept.model_validate(entry) for task, entry in raw.items()}
    except FileNotFoundError:
        return {}
    except (OSError, json.JSONDecodeError, ValidationError, AttributeError) as exc:
        raise TruthError(f"{path}: not a readable kept-share record: {exc}") from exc


def kept_text(project_root: Path, rendered: Rendered, tasks: list[str] | None) -> str:
    """The kept-share record after rendering `tasks` (the entries of other tasks are kept
    from the file on disk; with tasks=None every entry is new)."""
    entries = read_kept(project_root) if tasks is not None else {}
    for task in rendered.specs:
        rejected = {task.case_id(b): rendered.rejected[task.case_id(b)]
                    for b in task.bindings if task.case_id(b) in rendered.rejected}
        entries[task.task_id] = TaskKept(bindings=len(task.bindings),
                                         instances=len(task.bindings) - len(rejected), rejected=rejected)
    data = {task: entries[task].model_dump(mode="json") for task in sorted(entries)}
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# --- subset manifests ------------------------------------------------------------------------


def manifest_path(project_root: Path, bench_subset: str) -> Path:
    """The manifest file of one subset."""
    return Path(project_root) / MANIFESTS_DIR / f"{SUBSET_SLUGS[bench_subset]}.json"


def expected_manifests(project_root: Path, tasks: list[str] | None,
                       texts: dict[Path, str]) -> dict[Path, str]:
    """Manifest path -> text for the subsets `texts` touch (all four when tasks is None),
    counting the regenerated `texts` plus, with a task selection, the instance files on disk
    of the tasks not selected."""
    project_root = Path(project_root)
    managed = _managed_files(project_root, tasks)
    instances = [_parse_instance(path, text) for path, text in texts.items()]
    if tasks is not None:
        subsets = {inst.meta_info.bench_subset for inst in instances}
        others = [p for p in _managed_files(project_root, None) - managed - set(texts)
                  if _subset_of(project_root, p) in subsets]
        instances += [_parse_instance(p, None) for p in sorted(others)]
    else:
        subsets = set(ALL_SUBSETS)
    return {
        manifest_path(project_root, subset): catalog.manifest_text(catalog.subset_manifest(subset, instances))
        for subset in sorted(subsets)
    }


def _parse_instance(path: Path, text: str | None) -> Instance:
    try:
        raw = json.loads(path.read_text() if text is None else text)
        return Instance.model_validate(raw)
    except (OSError, json.JSONDecodeError, ValidationError) as exc:
        raise TruthError(f"{path}: not a readable instance file: {exc}") from exc


def _subset_of(project_root: Path, path: Path) -> str | None:
    slug = path.relative_to(project_root / "instances").parts[0]
    return next((s for s, known in SUBSET_SLUGS.items() if known == slug), None)


def pin_threads(controller: int, compiled: str | None) -> None:
    """Initialise a spawned script worker: die with the controller, one thread per library,
    numba code read from the compile cache `compiled` (never written) when one is given."""
    # Runs first in each spawned worker, before any script imports numpy or numba.
    die_with_parent(controller)
    for name in THREAD_VARS:
        os.environ[name] = "1"
    if compiled:
        kernel_jit.install(compiled, sysconfig.get_paths()["purelib"], writable=False)


def _managed_files(project_root: Path, tasks: list[str] | None) -> set[Path]:
    """Instance files `generate` owns: all in the subset folders, or those of `tasks`."""
    files = set()
    for slug in SUBSET_SLUGS.values():
        folder = project_root / "instances" / slug
        if not folder.is_dir():
            continue
        for path in folder.glob("*.json"):
            # task ids contain no '-', so "<task_id>-" cannot match another task's files
            if tasks is None or any(path.name.startswith(f"{t}-") for t in tasks):
                files.add(path)
    return files


def _first_difference(old: str, new: str) -> str:
    try:
        found = _diff_json(json.loads(old), json.loads(new), "")
    except json.JSONDecodeError:
        found = None
    return found or "formatting differs"


def _diff_json(old: Any, new: Any, where: str) -> str | None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            found = _diff_json(old.get(key), new.get(key), f"{where}.{key}" if where else key)
            if found:
                return found
        return None
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (a, b) in enumerate(zip(old, new)):
            found = _diff_json(a, b, f"{where}[{index}]")
            if found:
                return found
        return None
    if old != new:
        return f"{where}: committed {_short(old)}, regenerated {_short(new)}"
    return None


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


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


