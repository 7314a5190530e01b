"""Running a tool plan in-process, without a sandbox or a model: for authoring and checking plans.

The toolset reads inputs from the data root and writes artifacts into a temporary folder,
under the same path rules as in the sandbox; the report is scored by the real scorer (rules
parser, no judges: metrics that need a judge are left unscored and reported as such).
"""
from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.paradigms.brainagent.plans import Bindings, PlanError, build_report, finished, load_plan, next_segment
from runner.run.artifacts import retain_artifacts
from validation.context import ScoringContext
from validation.instance import Instance
from validation.scoring import score_instance


@dataclass
class PlanCheck:
    """One instance's plan run: the score over the scored metrics, what failed, the report."""

    case_id: str
    score: float | None
    failed_metrics: list[str] = field(default_factory=list)
    unscored: list[str] = field(default_factory=list)
    error: str | None = None
    report: dict[str, Any] | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        """No error and every scored metric at full marks."""
        return self.error is None and not self.failed_metrics


def run_plan(project_root: Path, instance: Instance, data_root: Path, workspace: Path) -> dict[str, Any]:
    """Play the task's plan on the instance in this process; the report it writes."""
    import braintools

    plan = load_plan(project_root, instance.meta_info.task_id or "")
    braintools.paths.use_roots(data_root, workspace / "file_check")
    braintools.STATE.reset()
    bindings = Bindings(instance)
    while segment := next_segment(plan, bindings):
        for step in segment:
            response = braintools.call(step.tool, bindings.resolve(step.args))
            if "error" in response:
                raise PlanError(f"{instance.case_id}: step {step.alias!r} ({step.tool}) failed: {response['error']['message']}")
            bindings.responses[step.alias] = json.loads(json.dumps(response, default=str))
    if not finished(plan, bindings):
        raise PlanError(f"{instance.case_id}: the plan is stuck (a step refers to one that never runs)")
    return build_report(plan, bindings)


def check_instance(project_root: Path, instance: Instance, data_root: Path) -> PlanCheck:
    """Run the plan and score its report against the instance's ground truth."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="eegbench-plan-") as tmp:
        workspace = Path(tmp)
        try:
            report = run_plan(project_root, instance, data_root, workspace)
        except PlanError as exc:
            return PlanCheck(instance.case_id, None, error=str(exc), seconds=time.perf_counter() - started)
        (workspace / "file_check").mkdir(exist_ok=True)
        kept = workspace / "retained"
        manifest = [entry.model_dump(exclude_none=True) for entry in retain_artifacts(workspace, kept)]
        context = ScoringContext(artifacts_dir=kept, manifest=manifest)
        score = score_instance(instance, json.dumps(report, indent=2), context)
    failed = [m.metric_id for m in score.metrics if m.scored and (m.score or 0.0) < 1.0]
    return PlanCheck(instance.case_id, score.score, failed, list(score.unscored), report=report,
                     seconds=time.perf_counter() - started)
