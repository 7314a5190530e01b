"""What scoring needs beyond the report: retained artifacts and the judges.

The deterministic units need nothing but the parsed value. Artifact validation needs the
files the model wrote, as the run retained them; semantic validation needs a judge model.
`ScoringContext` carries both and collects what they observe (path violations, judge
calls) so the score file records it. Without a judge, judge units stay unscored.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel

# Where the model's workspace is inside the sandbox, and the folder the run retains.
SANDBOX_WORKSPACE = "/workspace"
ARTIFACT_DIR = "file_check"


class JudgeVerdict(BaseModel):
    """A judge's answer: score in [0, 1], or None when no usable verdict came back."""

    score: float | None
    rationale: str = ""
    model: str = ""
    raw_reply: str | None = None
    error: str | None = None


# (judge_prompt, candidate text, reference or None) -> verdict
TextJudge = Callable[[str, str, Any], JudgeVerdict]
# (judge_prompt, image bytes, media type) -> verdict
ImageJudge = Callable[[str, bytes, str], JudgeVerdict]


@dataclass
class ScoringContext:
    """Per-instance scoring inputs. `artifacts_dir` holds the retained copy of
    /workspace/file_check/; `manifest` is retain_artifacts' record of it (including the
    symlinks and special files it refused to copy). `metric_id` names the metric being
    scored (see `for_metric`): what a unit records is filed under it."""

    artifacts_dir: Path | None = None
    manifest: list[dict[str, Any]] = field(default_factory=list)
    judge: TextJudge | None = None
    image_judge: ImageJudge | None = None
    violations: list[str] = field(default_factory=list)
    judge_calls: list[dict[str, Any]] = field(default_factory=list)
    metric_id: str = ""

    def for_metric(self, metric_id: str) -> ScoringContext:
        """This context as one metric's unit sees it: the same inputs and the same records
        (replace() passes the very lists, so what the unit records lands here), that id."""
        return replace(self, metric_id=metric_id)

    def record_judge(self, verdict: JudgeVerdict) -> None:
        """Keep a judge's verdict for the score file, under the current metric id."""
        self.judge_calls.append({"metric_id": self.metric_id, **verdict.model_dump(mode="json")})

    def record_violation(self, problem: str) -> None:
        """Keep an unsafe artifact path for the score file, under the current metric id."""
        self.violations.append(f"{self.metric_id}: {problem}")
