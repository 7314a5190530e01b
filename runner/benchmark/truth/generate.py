"""Many instances: `generate` (through the cache) and `check` (never through it), the kept
shares per task, and the subset manifests."""
from __future__ import annotations

import json
import logging
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
)

from runner.benchmark import catalog
from runner.benchmark.truth.cache import default_cache_dir, read_cache, write_cache
from runner.benchmark.truth.instance import assemble_instance, provenance, run_binding
from runner.benchmark.truth.pool import run_pinned
from runner.benchmark.truth.specs import (
    MANIFESTS_DIR,
    SUBSET_SLUGS,
    Binding,
    BindingRejected,
    TaskSpec,
    TruthError,
    instance_path,
    load_tasks,
)
from runner.core.fileio import write_atomic
from validation.instance import (
    ALL_SUBSETS,
    Instance,
    Reference,
    dump_instance,
)

log = logging.getLogger(__name__)

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
