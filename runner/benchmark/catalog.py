"""The instance set: load instance files, select them with SET=, summarise them per subset."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from runner.benchmark import lite
from runner.core.paths import Paths
from validation.errors import InstanceError, UserError
from validation.instance import AGENTBENCH_SUBSET, Instance, load_instance

INSTANCES_DIR = Paths().instances_dir


# Folders under instances/ that hold other JSON than instance files: task specs, subset
# manifests, mistake-sensitivity records (runner/benchmark/sensitivity.py).
NOT_INSTANCE_DIRS = ("tasks", "manifests", "sensitivity")


def instance_files(instances_dir: Path = INSTANCES_DIR) -> list[Path]:
    """Instance files, sorted; task specs (instances/tasks/), subset manifests
    (instances/manifests/) and sensitivity records (instances/sensitivity/) are not instances."""
    instances_dir = Path(instances_dir)
    return sorted(
        p for p in instances_dir.rglob("*.json")
        if not set(NOT_INSTANCE_DIRS) & set(p.relative_to(instances_dir).parts)
    )


def load_all(instances_dir: Path = INSTANCES_DIR, local_dir: Path | None = None) -> list[Instance]:
    """Every instance file under instances_dir, plus those `eegbench truth --dataset` wrote to
    local_dir (Paths.local_instances) when given."""
    files = instance_files(instances_dir)
    if local_dir is not None and local_dir.is_dir() \
            and not local_dir.resolve().is_relative_to(Path(instances_dir).resolve()):
        files += instance_files(local_dir)
    return _unique(files, [load_runnable(p) for p in files])


def load_cases(cases_dir: Path) -> list[Instance]:
    """Case files in BrainBench's format (every *.json under the folder), loaded unchanged."""
    if not cases_dir.is_dir():
        raise UserError(f"--cases {cases_dir}: not a directory")
    files = sorted(p for p in cases_dir.rglob("*.json") if p.is_file())
    if not files:
        raise UserError(f"--cases {cases_dir}: no .json case files found")
    return _unique(files, [load_runnable(p) for p in files])


def load_runnable(path: Path) -> Instance:
    """One instance file of a benchmark set: valid (load_instance) and scoring something."""
    instance = load_instance(path)
    if not instance.eval_config.metrics:
        raise InstanceError(f"{path}: field 'eval_config.metrics': expected at least one metric, got []")
    return instance


def _unique(files: list[Path], instances: list[Instance]) -> list[Instance]:
    """The instances, refused when two files hold one case id (it names a run's folder)."""
    first: dict[str, Path] = {}
    for path, inst in zip(files, instances):
        if inst.case_id in first:
            raise InstanceError(f"{path}: field 'meta_info.case_id': {inst.case_id!r} is also the case id "
                                f"of {first[inst.case_id]}")
        first[inst.case_id] = path
    return instances


ALL = "all"  # every instance of the default benchmark
CHECK = "check"  # one instance of each of its tasks: what `make eval` without a MODEL runs
LITE = "lite"  # the published lite subset (runner/benchmark/lite.py)


def select(instances: list[Instance], selectors: list[str]) -> list[Instance]:
    """Keep instances matching any selector: `all` (the default benchmark), `check` (its first
    instance of each task), `lite` (the published lite subset), a subset name (any case, '_'
    for spaces), a task id, a case id, or a task-id prefix ending in '*'. No selector keeps the
    default benchmark: every instance but the EEGAgentBench ones (SET=eegagentbench selects those)."""
    benchmark = [i for i in instances if i.meta_info.bench_subset != AGENTBENCH_SUBSET]
    if not selectors:
        return benchmark
    named = {ALL: {id(i) for i in benchmark}, CHECK: {id(i) for i in one_per_task(benchmark)}}
    if LITE in (s.lower() for s in selectors):
        named[LITE] = {id(i) for i in lite_subset(instances)}
    unmatched = [s for s in selectors if s.lower() not in named and not any(_matches(i, s) for i in instances)]
    if unmatched:
        raise UserError(f"SET: no instance matches {', '.join(unmatched)}")

    def wanted(instance: Instance, selector: str) -> bool:
        chosen = named.get(selector.lower())
        return id(instance) in chosen if chosen is not None else _matches(instance, selector)

    return [i for i in instances if any(wanted(i, s) for s in selectors)]


def lite_subset(instances: list[Instance]) -> list[Instance]:
    """The published lite subset's instances; UserError names published cases not loaded."""
    by_case = {i.case_id: i for i in instances}
    published = lite.read(INSTANCES_DIR.parent)
    missing = [c for c in published if c not in by_case]
    if missing:
        raise UserError(f"SET=lite: {len(missing)} published case(s) are not in the instance set (e.g. {missing[0]}); "
                        "`eegbench instances --lite` rewrites the subset from the current set")
    return [by_case[c] for c in published]


def one_per_task(instances: list[Instance]) -> list[Instance]:
    """The first instance (by case id) of each task."""
    first: dict[str, Instance] = {}
    for instance in sorted(instances, key=lambda i: i.case_id):
        first.setdefault(instance.task_id, instance)
    return sorted(first.values(), key=lambda i: i.case_id)


def parse_selection(text: str | None) -> list[str]:
    """SET= text -> selectors (comma-separated, blanks dropped)."""
    return [s.strip() for s in (text or "").split(",") if s.strip()]


def _matches(instance: Instance, selector: str) -> bool:
    subset = instance.meta_info.bench_subset.lower().replace(" ", "_")
    wanted = selector.lower().replace(" ", "_")
    if selector.endswith("*"):
        return instance.case_id.startswith(selector[:-1])
    return wanted in (subset, instance.task_id.lower(), instance.case_id.lower())


def instance_set_hash(instances: list[Instance]) -> str:
    """Hash of the selected instances' ids and ground truth, recorded in run.json."""
    digest = hashlib.sha256()
    for inst in sorted(instances, key=lambda i: i.case_id):
        digest.update(inst.model_dump_json(exclude_none=True).encode())
    return digest.hexdigest()


# --- subset manifests -----------------------------------------------------------------------


class TaskCounts(BaseModel):
    """One task's entry in a subset manifest: difficulty, kind, instance count, units by type."""

    difficulty: str | None
    kind: str | None = None  # recipe, open or long_horizon
    instances: int
    units: dict[str, int]  # metric type -> number of units over the task's instances


class Counts(BaseModel):
    """How many tasks and instances fall into one difficulty or unit-type group."""

    tasks: int
    instances: int


class SubsetManifest(BaseModel):
    """What one subset holds (instances/manifests/<subset_slug>.json): counts by task,
    difficulty and unit type, and the hash of its instances, so a reviewer sees what changed
    and `truth --check` notices a manifest that no longer describes the instance files."""

    bench_subset: str
    instance_set_hash: str
    tasks: int
    instances: int
    by_task: dict[str, TaskCounts]
    by_difficulty: dict[str, Counts]
    by_kind: dict[str, Counts]
    by_unit: dict[str, Counts]  # a task counts once per unit type it uses


def subset_slug(bench_subset: str) -> str:
    """"Sleep Assessment" -> "sleep_assessment" (folder and manifest names)."""
    return bench_subset.lower().replace(" ", "_")


def subset_manifest(bench_subset: str, instances: list[Instance]) -> SubsetManifest:
    """The manifest of one subset from its instances (instances of other subsets are ignored)."""
    mine = [i for i in instances if i.meta_info.bench_subset == bench_subset]
    by_task: dict[str, TaskCounts] = {}
    for inst in sorted(mine, key=lambda i: i.case_id):
        counts = by_task.setdefault(
            inst.task_id, TaskCounts(difficulty=inst.meta_info.difficulty, kind=inst.meta_info.kind,
                                     instances=0, units={}))
        counts.instances += 1
        for metric in inst.eval_config.metrics:
            counts.units[metric.type] = counts.units.get(metric.type, 0) + 1
    return SubsetManifest(
        bench_subset=bench_subset,
        instance_set_hash=instance_set_hash(mine),
        tasks=len(by_task),
        instances=len(mine),
        by_task=by_task,
        by_difficulty=_group_counts(by_task, lambda c: [c.difficulty or "unknown"]),
        by_kind=_group_counts(by_task, lambda c: [c.kind or "unknown"]),
        by_unit=_group_counts(by_task, lambda c: list(c.units)),
    )


def manifest_text(manifest: SubsetManifest) -> str:
    """Canonical JSON text of a manifest (stable key order: regeneration is byte-identical)."""
    return json.dumps(manifest.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"


def _group_counts(by_task: dict[str, TaskCounts], keys: Callable[[TaskCounts], list[str]]) -> dict[str, Counts]:
    groups: dict[str, Counts] = {}
    for counts in by_task.values():
        for key in keys(counts):
            group = groups.setdefault(key, Counts(tasks=0, instances=0))
            group.tasks += 1
            group.instances += counts.instances
    return dict(sorted(groups.items()))
