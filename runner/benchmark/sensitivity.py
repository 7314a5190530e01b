"""Mistake sensitivity: does a plausible wrong analysis lose points?

Every mutant of a task (runner/benchmark/mutants.py) runs on every instance of the task, as the
reference script does in `truth` (spawned workers, pinned threads, a result cache under
.cache/mutants/). Its answer, the value of each field a report gives (an ensemble answers
with its consensus), is written into a ```json report and scored by the real scorer against
the instance's ground truth. Only field metrics count: a file or judge metric needs a run's
files or an LLM, so the score is the weighted mean over the field metrics.

A mutant is caught when it scores at most CAUGHT_AT on at least MIN_CAUGHT of its task's
instances; every pipeline of a method ensemble, a valid alternative analysis, must score 100.
The answers are recorded in instances/sensitivity/<task_id>.json, so the verdicts can be
recomputed against the current instance files (a widened tolerance shows at once) without
rerunning a script, and `check` reruns them to prove the record reproduces.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from runner.benchmark import catalog, ensemble, mutants, truth
from runner.core.fileio import write_atomic
from validation.context import ScoringContext
from validation.errors import UserError
from validation.instance import Instance, MetricSpec, Reference
from validation.scoring import score_instance
from validation.unit_registry import UNITS

CAUGHT_AT = 50.0  # a mutant is caught on an instance where it scores at most this (of 100)
MIN_CAUGHT = 0.9  # ... and caught when that holds on at least this share of its task's instances
RECORDS_DIR = Path("instances/sensitivity")
CACHE_DIR = Path(".cache/mutants")
ERROR_KEY = "error"  # an answer that is {"error": text}: the mutant failed on that instance


class TaskSensitivity(BaseModel):
    """One task's verdict: per mutant the share of instances where it scored at most CAUGHT_AT,
    and how many ensemble pipeline values scored 100 (of all)."""

    task_id: str
    instances: int
    shares: dict[str, float]  # mutant -> share of instances where it is caught
    failed: dict[str, int] = {}  # mutant -> instances where it raised (counted as not caught)
    alternatives_accepted: int = 0
    alternatives: int = 0

    @property
    def mutants(self) -> int:
        """How many mutants were tried."""
        return len(self.shares)

    @property
    def caught(self) -> int:
        """How many mutants were caught (on at least MIN_CAUGHT of the instances)."""
        return sum(share >= MIN_CAUGHT for share in self.shares.values())

    @property
    def uncaught(self) -> list[str]:
        """The names of the mutants not caught, sorted."""
        return sorted(name for name, share in self.shares.items() if share < MIN_CAUGHT)

    @property
    def passes(self) -> bool:
        """At least MIN_MUTANTS mutants, every one caught, every valid alternative accepted."""
        return (self.mutants >= mutants.MIN_MUTANTS and not self.uncaught
                and self.alternatives_accepted == self.alternatives)


# --- scoring one answer ------------------------------------------------------------------


def is_field_type(metric_type: str) -> bool:
    """A metric a report answers with one value that pipelines can agree on or average (the
    units that take an ensemble): what a mutant's answer is scored on."""
    return metric_type in UNITS and UNITS.get(metric_type).ensemble is not None


def field_metrics(instance: Instance) -> list[MetricSpec]:
    """The instance's metrics a report answers with a value (not a file, not a judge)."""
    return [m for m in instance.eval_config.metrics if is_field_type(m.type)]


def answer_of(instance: Instance, result: dict[str, Any]) -> dict[str, Any]:
    """What a pipeline with this script result reports: field -> value (an ensemble metric's
    value is the consensus of its pipelines, as the oracle reports it)."""
    ensembles = (instance.reference.ensembles if instance.reference else None) or {}
    answer: dict[str, Any] = {}
    for metric in field_metrics(instance):
        if metric.target_key not in result:
            continue  # the field is left out of the report, as a model that omits it
        value = result[metric.target_key]
        if metric.metric_id in ensembles and isinstance(value, dict):
            value = ensemble.consensus(metric.type, value)
        answer[metric.target_key] = value
    return answer


def answer_score(instance: Instance, answer: dict[str, Any]) -> float:
    """The score (0-100) the real scorer gives a ```json report of `answer`, weighted over the
    instance's field metrics."""
    report = "```json\n" + json.dumps(answer, ensure_ascii=False) + "\n```"
    scored = score_instance(instance, report)
    fields = [r for r in scored.metrics if is_field_type(r.type)]
    weight = sum(r.weight for r in fields)
    if weight <= 0:
        raise UserError(f"{instance.case_id}: no field metric to score a mutant on")
    return round(100.0 * sum(r.weight * (r.score or 0.0) for r in fields) / weight, 2)


def alternatives(instance: Instance) -> tuple[int, int]:
    """(accepted, all) pipeline values of the instance's method ensembles, each scored alone
    against its metric: a valid alternative analysis must score 100."""
    ensembles = (instance.reference.ensembles if instance.reference else None) or {}
    accepted = total = 0
    for metric in instance.eval_config.metrics:
        for value in (ensembles.get(metric.metric_id) or {}).values():
            outcome = UNITS.get(metric.type).score(value, metric.params, ScoringContext())
            total += 1
            accepted += outcome.score == 1.0
    return accepted, total


def score_record(record: dict[str, Any], instances: list[Instance]) -> TaskSensitivity:
    """The verdict of a record's answers against the given (current) instances of its task."""
    by_case = {i.case_id: i for i in instances}
    shares: dict[str, float] = {}
    failed: dict[str, int] = {}
    for name, entry in record["mutants"].items():
        answers = entry["answers"]
        cases = [c for c in answers if c in by_case]
        errors = sum(_failed(answers[c]) for c in cases)
        caught = sum(not _failed(answers[c]) and answer_score(by_case[c], answers[c]) <= CAUGHT_AT for c in cases)
        shares[name] = round(caught / len(cases), 4) if cases else 0.0
        if errors:
            failed[name] = errors
    pairs = [alternatives(i) for i in instances]
    return TaskSensitivity(task_id=record["task_id"], instances=len(instances), shares=shares, failed=failed,
                           alternatives_accepted=sum(a for a, _ in pairs), alternatives=sum(t for _, t in pairs))


# --- records -------------------------------------------------------------------------------


def record_path(project_root: Path, task_id: str) -> Path:
    """Where a task's sensitivity record lives."""
    return Path(project_root) / RECORDS_DIR / f"{task_id}.json"


def read_record(project_root: Path, task_id: str) -> dict[str, Any] | None:
    """A task's recorded answers and summary, or None when it has none."""
    path = record_path(project_root, task_id)
    if not path.is_file():
        return None
    try:
        record: dict[str, Any] = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON: {exc}") from None
    return record


def record_text(task_id: str, script: str, script_sha: str, sources: dict[str, tuple[mutants.Mutant, str]],
                answers: dict[str, dict[str, dict[str, Any]]], verdict: TaskSensitivity) -> str:
    """The canonical text of a task's record."""
    record = {
        "task_id": task_id,
        "script": script,
        "script_sha256": script_sha,
        "caught_at": CAUGHT_AT,
        "min_caught": MIN_CAUGHT,
        "summary": {"mutants": verdict.mutants, "caught": verdict.caught, "shares": verdict.shares,
                    "failed": verdict.failed,
                    "alternatives": {"accepted": verdict.alternatives_accepted, "of": verdict.alternatives}},
        "mutants": {name: {"mistake": mutant.mistake, "why": mutant.why, "source_sha256": sha,
                           "answers": dict(sorted(answers[name].items()))}
                    for name, (mutant, sha) in sources.items()},
    }
    return json.dumps(record, indent=1, sort_keys=False, ensure_ascii=False) + "\n"


def stale(project_root: Path, record: dict[str, Any], instances: list[Instance]) -> list[str]:
    """Why a record no longer describes its task (empty when it does): the script, a mutant,
    or the set of instances changed since it was made."""
    task = truth.load_task(Path(project_root) / truth.TASKS_DIR / f"{record['task_id']}.json")
    script_text = (Path(project_root) / task.script).read_text()
    reasons = []
    if record.get("script_sha256") != mutants.source_sha256(script_text):
        reasons.append(f"{task.script} changed")
    current = {m.name: mutants.source_sha256(mutants.mutant_source(task.task_id, m, script_text))
               for m in mutants.load_mutants(project_root, task.task_id)}
    recorded = {name: entry.get("source_sha256") for name, entry in record["mutants"].items()}
    if current != recorded:
        changed = sorted(n for n in set(current) | set(recorded) if current.get(n) != recorded.get(n))
        reasons.append(f"mutant(s) changed, added or removed: {', '.join(changed)}")
    cases = {i.case_id for i in instances}
    for name, entry in record["mutants"].items():
        if set(entry["answers"]) != cases:
            reasons.append(f"mutant {name} was run on other instances than the task has now")
            break
    return reasons


def recorded_summaries(project_root: Path, task_ids: list[str]) -> dict[str, dict[str, int]]:
    """task -> {"caught": k, "mutants": n} from the records of the tasks that have one: what a
    run keeps in run.json, so its report shows the figures the run was made under."""
    found = {}
    for task_id in sorted(set(task_ids)):
        record = read_record(project_root, task_id)
        if record is not None:
            found[task_id] = {"caught": int(record["summary"]["caught"]), "mutants": int(record["summary"]["mutants"])}
    return found


# --- running mutants -----------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One mutant on one instance: the mutant's source file and the instance's binding."""

    task_id: str
    mutant: str
    case_id: str
    source: str
    inputs: tuple[str, ...]
    params: dict[str, Any]
    reference: Reference  # the binding's provenance with the mutant's sha256: the cache key


@dataclass
class Plan:
    """A task's mutants and the jobs that run them on its instances."""

    task_id: str
    script: str
    script_sha: str
    sources: dict[str, tuple[mutants.Mutant, str]]  # name -> (mutant, source sha256)
    instances: list[Instance]
    jobs: list[Job]


def plan(project_root: Path, data_root: Path, task_id: str, instances: list[Instance],
         cases: set[str] | None = None) -> Plan:
    """The jobs of a task's mutants on its instances (all, or those in `cases`); the mutant
    sources are written under .cache/mutants/sources/<task_id>/."""
    project_root = Path(project_root)
    task = truth.load_task(project_root / truth.TASKS_DIR / f"{task_id}.json")
    found = mutants.load_mutants(project_root, task_id)
    if not found:
        raise UserError(f"{task_id}: no mutants ({mutants.mutants_path(project_root, task_id)} is missing)")
    script_text = (project_root / task.script).read_text()
    bindings = {task.case_id(b): b for b in task.bindings}
    sources: dict[str, tuple[mutants.Mutant, str]] = {}
    jobs: list[Job] = []
    for mutant in found:
        text = mutants.mutant_source(task_id, mutant, script_text)
        sha = mutants.source_sha256(text)
        sources[mutant.name] = (mutant, sha)
        path = project_root / CACHE_DIR / "sources" / task_id / f"{mutant.name}.py"
        if not path.is_file() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text)
        for instance in instances:
            if cases is not None and instance.case_id not in cases:
                continue
            binding = bindings.get(instance.case_id)
            if binding is None:
                raise UserError(f"{instance.case_id}: no binding of task {task_id} makes this instance")
            reference = truth.provenance(task, binding, project_root, data_root)
            jobs.append(Job(task_id, mutant.name, instance.case_id, str(path),
                            tuple(str(Path(data_root) / p) for p in binding.input_paths()), binding.params,
                            reference.model_copy(update={"script_sha256": sha, "script": str(path)})))
    return Plan(task_id, task.script, mutants.source_sha256(script_text), sources, instances, jobs)


def run_job(job: Job) -> dict[str, Any]:
    """The mutant's script result on the job's binding, or {"error": text} when it raised."""
    try:
        return truth.run_script(job.case_id, Path(job.source), list(job.inputs), job.params)
    except truth.TruthError as exc:
        return {ERROR_KEY: str(exc).split(": ", 1)[-1].splitlines()[0]}


def run_jobs(jobs: list[Job], workers: int, cache_dir: Path | None, progress: bool,
             project_root: Path) -> list[dict[str, Any]]:
    """Every job's result, in order: from the cache when it holds one, else from a pool of
    spawned workers with pinned threads (each result cached as it arrives)."""
    results: list[dict[str, Any] | None] = [truth.read_cache(cache_dir, j.reference) if cache_dir else None
                                            for j in jobs]
    pending = [index for index, hit in enumerate(results) if hit is None]

    def arrived(position: int, future: Future[dict[str, Any]]) -> dict[str, Any]:
        result = future.result()  # run_job never raises: a failing mutant gives {"error": ...}
        if cache_dir and not _failed(result):
            truth.write_cache(cache_dir, jobs[pending[position]].reference, result)
        return result

    fresh = truth.run_pinned(run_job, [(jobs[index],) for index in pending], workers, progress, "mutants", arrived,
                              project_root)
    for index, result in zip(pending, fresh):
        results[index] = result
    return [r if r is not None else {} for r in results]


def _answers(task_plan: Plan, results: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """mutant -> case id -> the answer its result gives."""
    by_case = {i.case_id: i for i in task_plan.instances}
    answers: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in task_plan.sources}
    for job, result in zip(task_plan.jobs, results):
        answer = dict(result) if _failed(result) else answer_of(by_case[job.case_id], result)
        answers[job.mutant][job.case_id] = answer
    return answers


def task_instances(project_root: Path, task_ids: list[str]) -> dict[str, list[Instance]]:
    """task -> its committed instances sorted by case id, the instance set read once; a task
    with none is an error naming it."""
    found: dict[str, list[Instance]] = {task_id: [] for task_id in task_ids}
    for instance in catalog.load_all(Path(project_root) / "instances"):
        if instance.task_id in found:
            found[instance.task_id].append(instance)
    empty = [task_id for task_id, items in found.items() if not items]
    if empty:
        raise UserError(f"task {', '.join(empty)}: no committed instance")
    return {task_id: sorted(items, key=lambda i: i.case_id) for task_id, items in found.items()}


def sensitivity(project_root: Path, data_root: Path, task_ids: list[str], jobs: int = 1, cache: bool = True,
                progress: bool = True,
                on_task: Callable[[TaskSensitivity], None] | None = None) -> list[TaskSensitivity]:
    """Run every mutant of the tasks on all their instances, write each task's record and
    return the verdicts (in task order)."""
    project_root = Path(project_root)
    cache_dir = project_root / CACHE_DIR if cache else None
    verdicts = []
    by_task = task_instances(project_root, task_ids)
    for task_id in task_ids:
        instances = by_task[task_id]
        task_plan = plan(project_root, data_root, task_id, instances)
        answers = _answers(task_plan, run_jobs(task_plan.jobs, jobs, cache_dir, progress, project_root))
        record = {"task_id": task_id, "mutants": {n: {"answers": a} for n, a in answers.items()}}
        verdict = score_record(record, instances)
        text = record_text(task_id, task_plan.script, task_plan.script_sha, task_plan.sources, answers, verdict)
        path = record_path(project_root, task_id)
        if not path.is_file() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text)
        verdicts.append(verdict)
        if on_task is not None:
            on_task(verdict)
    return verdicts


def rescore(project_root: Path, task_ids: list[str]) -> dict[str, TaskSensitivity]:
    """task -> the verdict of its recorded answers against its current instances (tasks with
    no record are left out)."""
    records = {task_id: record for task_id in task_ids if (record := read_record(project_root, task_id)) is not None}
    by_task = task_instances(project_root, list(records)) if records else {}
    return {task_id: score_record(record, by_task[task_id]) for task_id, record in records.items()}


def check(project_root: Path, data_root: Path, task_ids: list[str], jobs: int = 1,
          first_only: bool = False, progress: bool = True) -> list[str]:
    """Differences between the recorded answers and a fresh run of the mutants (no cache): on
    every instance of the tasks, or with `first_only` on each task's first instance."""
    problems = []
    by_task = task_instances(project_root, task_ids)
    for task_id in task_ids:
        record = read_record(project_root, task_id)
        if record is None:
            problems.append(f"{task_id}: no record ({record_path(project_root, task_id)}); "
                            "run `eegbench instances --sensitivity --task {task_id}`")
            continue
        instances = by_task[task_id]
        problems += [f"{task_id}: stale record: {reason}" for reason in stale(project_root, record, instances)]
        cases = {instances[0].case_id} if first_only else None
        task_plan = plan(project_root, data_root, task_id, instances, cases)
        fresh = _answers(task_plan, run_jobs(task_plan.jobs, jobs, None, progress, project_root))
        for name, answers in fresh.items():
            for case_id, answer in answers.items():
                kept = record["mutants"].get(name, {}).get("answers", {}).get(case_id)
                if kept != answer:
                    problems.append(f"{case_id}: mutant {name}: recorded {_short(kept)}, fresh {_short(answer)}")
    return problems


def _failed(answer: dict[str, Any]) -> bool:
    """A mutant that raised gives no answer: it is not counted as caught (the scorer did not
    catch it), and the record shows the error."""
    return set(answer) == {ERROR_KEY}


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."
