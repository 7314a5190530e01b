"""Task kinds: mean score and solve rate by how a task asks (a recipe that names the method,
an open goal that leaves it to the agent, a long-horizon pipeline scored at several points),
per configuration and subset: where strong agents separate, open and long-horizon tasks
should show it."""
from __future__ import annotations

from runner.report.context import OVERALL, ReportContext, mean, scored
from runner.report.model import Column, ReportTable
from validation.instance import TASK_KINDS

SECTION = "Task kinds"
SOLVED = 100.0


def tables(ctx: ReportContext) -> list[ReportTable]:
    """kinds: one row per configuration, subset and kind present in the runs."""
    rows = []
    for config in ctx.configurations():
        config_rows = scored(ctx.config_rows(config))
        for subset in [*ctx.subsets(), OVERALL]:
            for kind in TASK_KINDS:
                chosen = [r for r in config_rows if r.kind == kind and subset in (OVERALL, r.subset)]
                if not chosen:
                    continue
                scores = [float(r.score or 0.0) for r in chosen]
                rows.append({"model": config.model, "paradigm": config.paradigm, "subset": subset, "kind": kind,
                             "tasks": len({r.task_id for r in chosen}), "mean": mean(scores),
                             "solved": sum(s >= SOLVED for s in scores) / len(scores), "instances": len(scores)})
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="subset", title="subset"), Column(key="kind", title="kind"),
               Column(key="tasks", title="tasks", kind="int"), Column(key="mean", title="mean", kind="score"),
               Column(key="solved", title="solved (score 100)", kind="share"),
               Column(key="instances", title="instance runs", kind="int")]
    notes = ["recipe: the instruction names the method; open: it states the goal and the ground truth comes from a "
             "method ensemble (tolerance from the pipelines' spread); long_horizon: a whole pipeline scored at "
             "several points. Runs made before task kinds existed have none and are left out."]
    return [ReportTable(name="kinds", title="Mean score by task kind", section=SECTION, columns=columns,
                        rows=rows, notes=notes)]
