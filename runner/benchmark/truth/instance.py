"""One instance: a binding's reference script run (in the caller's process or a pinned
worker), its provenance, and the instance file it makes."""
from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import json
import math
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

from runner.benchmark import ensemble as ensembles
from runner.benchmark.truth.specs import Binding, BindingRejected, TaskMetric, TaskSpec, TruthError
from runner.core.fileio import sha256_file
from validation.errors import MetricConfigError
from validation.instance import (
    DIFFICULTY_LEVELS,
    AgentInput,
    EvalConfig,
    Instance,
    MetaInfo,
    MetricSpec,
    Reference,
)
from validation.unit import GT_KEY
from validation.unit_registry import UNITS

# Libraries whose versions can change a result, beyond those a script imports itself.
RESULT_DEPENDENCIES = {
    "scipy": ("numpy",),
    "pandas": ("numpy",),
    "h5py": ("numpy",),
    "mne": ("numpy", "scipy"),
    "yasa": ("numpy", "scipy", "pandas", "mne", "lightgbm", "scikit-learn", "antropy"),
}
MODULE_DISTRIBUTIONS = {"sklearn": "scikit-learn"}


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
        expected = UNITS.get(metric.type).ground_truth_types
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
        UNITS.get(metric.type).check_params(params)
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
