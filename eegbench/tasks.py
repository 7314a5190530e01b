"""The Inspect tasks, one per paradigm, over eegbench's instance set.

    inspect eval eegbench/codeact --model openai/gpt-4o -T set=lite
    inspect eval eegbench/brainagent --model anthropic/claude-sonnet-4-0 -T subset=sleep_analysis --epochs 3

Task arguments (`-T name=value`), each optional:

- `set`: SET-style selection, as `eegbench eval --set` takes it: comma-separated `all`, `check`
  (one instance per task), `lite`, subset names ('_' for spaces), task ids, case ids or
  `prefix*`; none selects the default benchmark.
- `subset`, `task`: keep one subset, or one task id (or `prefix*`), of what `set` selected.
- `run`: the eegbench run directory's name (default `inspect-<model>-<paradigm>-<time>`); the
  name of an earlier run resumes it, its finished entries taken as they are.
- `jobs`: instances running at once in eegbench's sandboxes (default 1); `--max-samples` above
  it only queues samples.
- `sandbox`: local, docker or auto, as `eegbench eval --sandbox`.
- `controls`: eegbench's interaction controls to change, a mapping of their names
  (runner/core/settings.py's ControlLimits) to values, e.g. `-T 'controls={max_rounds: 10,
  deadline_s: 300}'`; the rest keep `eegbench eval`'s defaults.

A sample is one instance: id = case id, input = its instruction, target = each metric's
reference value (JSON), metadata = task id, subset and difficulty. Inspect's `--limit`,
`--sample-id` and `--epochs` pick and repeat samples as usual. Bad arguments stop the task
before anything runs, with one message naming the argument.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from inspect_ai import Task, task
from inspect_ai._util.error import PrerequisiteError  # what `inspect eval` reports as a message
from inspect_ai.dataset import MemoryDataset, Sample
from pydantic import ValidationError

from eegbench.run import InspectRun, Selection
from eegbench.scorer import instance_score
from eegbench.solver import run_instance
from runner.benchmark import catalog
from runner.commands.eval_checks import check_runnable
from runner.core.config import RunConfig, check_run_id
from runner.core.paths import Environment
from runner.core.settings import ControlLimits
from runner.report.inspect_log import expected_values
from runner.sandbox import sandbox_choices
from validation.errors import UserError
from validation.instance import Instance

T = TypeVar("T")


class TaskArgumentError(UserError, PrerequisiteError):
    """A task argument that names nothing, or arguments that select no instance. Inspect's
    command line prints a PrerequisiteError's message alone, without a traceback."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _registered(paradigm: str, summary: str) -> Callable[..., Task]:
    """The task `eegbench/<paradigm>`: one registered function per paradigm, as Inspect finds them."""

    def build(set: str | list[str] = "", subset: str = "", task: str = "", run: str = "", jobs: int = 1,
              sandbox: str = "local", controls: dict[str, Any] | None = None) -> Task:
        return paradigm_task(paradigm, set=set, subset=subset, task=task, run=run, jobs=jobs, sandbox=sandbox,
                             controls=controls or {})

    build.__name__ = build.__qualname__ = paradigm
    build.__doc__ = summary
    return task(name=paradigm)(build)


codeact = _registered("codeact", "CodeAct: <execute> blocks in a persistent Jupyter kernel, then a <solution>.")
hybrid = _registered("hybrid", "CodeAct with the eegtools library importable in the kernel.")
brainagent = _registered("brainagent", "BrainAgent: a planner delegating to tool-using subagents (JSON actions).")
tools = _registered("tools", "eegtools as JSON actions, no code (artifact tasks cannot be written).")


def paradigm_task(paradigm: str, *, set: str | list[str], subset: str, task: str, run: str, jobs: int, sandbox: str,
                  controls: dict[str, Any]) -> Task:
    """The task running `paradigm` over the instances the arguments select."""
    set = ",".join(set) if isinstance(set, list) else set  # Inspect reads -T set=a,b as a list
    arguments = {"set": set, "subset": subset, "task": task, "run": run, "jobs": jobs, "sandbox": sandbox,
                 "controls": controls}
    where = f"eegbench/{paradigm}"
    limits = control_limits(where, controls)
    if run:
        _argument(where, "run", lambda: check_run_id(run))
    for name, value in (("subset", subset), ("task", task), ("run", run), ("sandbox", sandbox)):
        if not isinstance(value, str):
            raise TaskArgumentError(f"{where}: -T {name}={value!r}: give one name (set= takes several)")
    if not isinstance(jobs, int) or jobs < 1:
        raise TaskArgumentError(f"{where}: -T jobs={jobs!r}: give a whole number of at least 1")
    if sandbox not in sandbox_choices():
        raise TaskArgumentError(f"{where}: -T sandbox={sandbox!r} is not one of {', '.join(sandbox_choices())}")
    env = Environment.from_os()
    every = catalog.load_all(env.paths.instances_dir, env.paths.local_instances)
    instances = select(where, every, set, subset, task)
    check_runnable(instances, env.paths.data_root, "run `make data`")
    selection = Selection(every=every, instances=instances, arguments=arguments)
    config = RunConfig(run_id=run or "unnamed", model="inspect", paradigm=paradigm,
                       selection=catalog.parse_selection(set), jobs=jobs, sandbox=sandbox, controls=limits)
    eegbench_run = InspectRun(config, env, selection, named=bool(run))
    return Task(dataset=dataset(instances, where), solver=run_instance(eegbench_run),
                scorer=instance_score(eegbench_run), metadata={"eegbench_paradigm": paradigm, **arguments})


def select(where: str, every: list[Instance], set: str, subset: str, task: str) -> list[Instance]:
    """The instances `set` selects, narrowed to `subset` and `task`; TaskArgumentError names the
    argument that matches nothing, or says that together they select nothing."""
    chosen = _argument(where, "set", lambda: catalog.select(every, catalog.parse_selection(set)))
    if subset:
        names = sorted({catalog.subset_slug(i.meta_info.bench_subset) for i in every})
        wanted = catalog.subset_slug(subset)
        if wanted not in names:
            raise TaskArgumentError(f"{where}: -T subset={subset!r} is not a subset; the subsets are {', '.join(names)}")
        chosen = [i for i in chosen if catalog.subset_slug(i.meta_info.bench_subset) == wanted]
    if task:
        if not any(_task_matches(i, task) for i in every):
            raise TaskArgumentError(f"{where}: -T task={task!r} is not a task id (nor a prefix ending in '*')")
        chosen = [i for i in chosen if _task_matches(i, task)]
    if not chosen:
        given = ", ".join(f"{name}={value!r}" for name, value in (("set", set), ("subset", subset), ("task", task))
                          if value)
        raise TaskArgumentError(f"{where}: -T {given} select no instance together")
    return chosen


def control_limits(where: str, controls: object) -> ControlLimits:
    """eegbench's interaction controls with the given ones changed; TaskArgumentError names a
    control that does not exist or a value it does not take."""
    if not isinstance(controls, dict):
        raise TaskArgumentError(f"{where}: -T controls={controls!r}: give a mapping, e.g. -T 'controls={{max_rounds: 10}}'")
    unknown = sorted(str(name) for name in controls if name not in ControlLimits.model_fields)
    if unknown:
        raise TaskArgumentError(f"{where}: -T controls: no control named {', '.join(unknown)}; the controls are "
                                f"{', '.join(ControlLimits.model_fields)}")
    try:
        return ControlLimits(**controls)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise TaskArgumentError(f"{where}: -T controls: {problems}") from None


def dataset(instances: list[Instance], where: str) -> MemoryDataset:
    """One sample per instance, in case id order."""
    samples = [Sample(id=i.case_id, input=i.agent_input.instruction,
                      target=json.dumps(expected_values(i), ensure_ascii=False, default=str),
                      metadata={"task_id": i.task_id, "bench_subset": i.meta_info.bench_subset,
                                "difficulty": i.meta_info.difficulty})
               for i in sorted(instances, key=lambda i: i.case_id)]
    return MemoryDataset(samples, name=f"{where} ({catalog.instance_set_hash(instances)[:12]})")


def _task_matches(instance: Instance, task: str) -> bool:
    if task.endswith("*"):
        return instance.task_id.startswith(task[:-1])
    return instance.task_id == task


def _argument(where: str, name: str, check: Callable[[], T]) -> T:
    """`check()`, with a UserError it raises reworded to name the task argument."""
    try:
        return check()
    except UserError as exc:
        raise TaskArgumentError(f"{where}: -T {name}: {exc}") from None
