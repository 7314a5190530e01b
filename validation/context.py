"""What scoring needs beyond the report: retained artifacts and the judges.

The deterministic units need nothing but the parsed value. Artifact validation needs the
files the model wrote, as the run retained them; semantic validation needs a judge model.
`ScoringContext` carries both and collects what they observe (path violations, judge
calls) so the score file records it. Without a judge, judge units stay unscored.
"""
from __future__ import annotations

from dataclasses import dataclass, field
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
    symlinks and special files it refused to copy)."""

    artifacts_dir: Path | None = None
    manifest: list[dict] = field(default_factory=list)
    judge: TextJudge | None = None
    image_judge: ImageJudge | None = None
    violations: list[str] = field(default_factory=list)
    judge_calls: list[dict] = field(default_factory=list)

    def record_judge(self, metric_id: str, verdict: JudgeVerdict) -> None:
        self.judge_calls.append({"metric_id": metric_id, **verdict.model_dump(mode="json")})
