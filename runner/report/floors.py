"""The guessing floor under every instance run a report holds: the chance level of its metrics
and the expected score of its task's best constant answer (validation/baseline.py).

The levels are those eval recorded in run.json: computed over each task's whole instance set,
so a run over one case per task shows the same floor as a run over everything. A run made
before eval recorded them gets levels estimated from the runs' own saved instances, each
constant chosen without the case it is scored on (held out), never the inflated in-sample
best answer of a lone case. A row's floor weighs its metrics as its score did: a unit the run
left unscored (a judge unit without a judge) is left out of both. `normalised` puts a score on
the scale of what guessing cannot earn: (score - floor) / (100 - floor) x 100.
"""
from __future__ import annotations

from dataclasses import dataclass

from runner.report.rows import InstanceRow, RunData
from runner.run.recorded import MissingRecord
from validation.baseline import TaskLevels, held_out_levels, instance_floor
from validation.instance import Instance


@dataclass(frozen=True)
class Floors:
    """The saved instance of every case and the levels of every task; `held_out`: tasks
    whose levels were estimated from the runs' own instances."""

    instances: dict[str, Instance]
    levels: TaskLevels
    held_out: tuple[str, ...] = ()

    def of(self, row: InstanceRow) -> tuple[float, float] | None:
        """(chance, constant), 0-100, under this instance run; None when its case is unknown."""
        instance = self.instances.get(row.case_id)
        return None if instance is None else instance_floor(instance, self.levels, row.unscored)

    def normalised(self, row: InstanceRow) -> float | None:
        """The row's score above its floor, as a share of the room above it (x 100); None when
        the row is not scored, its case unknown, or its floor is 100."""
        levels = self.of(row)
        if not row.scored or levels is None or levels[1] >= 100.0:
            return None
        return 100.0 * (float(row.score or 0.0) - levels[1]) / (100.0 - levels[1])


def floors_of(runs: list[RunData]) -> Floors:
    """The floors of every case the runs hold (the first run holding a task gives its levels)."""
    instances = saved_instances(runs)
    recorded: TaskLevels = {}
    for run in runs:
        for task, metrics in (run.info.floors or {}).items():
            recorded.setdefault(task, {metric: (float(pair[0]), float(pair[1])) for metric, pair in metrics.items()})
    lacking = [inst for inst in instances.values() if inst.task_id not in recorded]
    levels = {**held_out_levels(lacking), **recorded}
    return Floors(instances=instances, levels=levels, held_out=tuple(sorted({i.task_id for i in lacking})))


def saved_instances(runs: list[RunData]) -> dict[str, Instance]:
    """One saved instance per case id (the first run holding it)."""
    found: dict[str, Instance] = {}
    for run in runs:
        for row in run.rows:
            if row.case_id in found:
                continue
            try:
                found[row.case_id] = run.store.saved_instance(row.key)
            except MissingRecord:
                continue
    return found
