"""What scoring needs beyond the report: retained artifacts and the judges.

The deterministic units need nothing but the parsed value. Artifact validation needs the
files the model wrote, as the run retained them; semantic validation needs a judge model.
`ScoringContext` carries both and collects what they observe (path violations, judge
calls) so the score file records it. Without a judge, judge units stay unscored.

Every LLM call made while scoring (a parse, a verdict) records its cost: the endpoint's
model, its role, the tokens it reported and the wall time the call took, retries included
(`CallUsage`, measured by `UsageMeter` around the call's chat function).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import BaseModel

# Where the model's workspace is inside the sandbox, and the folder the run retains.
SANDBOX_WORKSPACE = "/workspace"
ARTIFACT_DIR = "file_check"


Role = Literal["parser", "judge", "vlm_judge"]
USAGE_DECIMALS = 6  # latency rounding, as scoring rounds everything it records


@dataclass(frozen=True)
class ChatReply:
    """One reply of a scoring endpoint and the token counts it reported (None: not reported)."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool = False  # served from the scoring cache: its tokens were spent when first asked


# messages -> reply; a plain str is a reply whose token counts are unknown. Raises on
# transport failure (the endpoint's client has retried by then).
Chat = Callable[[list[dict[str, Any]]], str | ChatReply]


def as_reply(value: str | ChatReply) -> ChatReply:
    """A chat function's answer as a ChatReply (a plain text reports no usage)."""
    return value if isinstance(value, ChatReply) else ChatReply(text=value)


class CallUsage(BaseModel):
    """What one scoring call cost, kept in its parser_calls / judge_calls entry.

    A call is one parse or one verdict: up to two chat requests (a malformed reply is asked
    for again). Tokens are summed over its requests, None unless every request reported
    them, and include replies served from the cache (`cached_requests`). `latency_s` is the
    wall time of the whole call, transport retries and backoff included. `role` None: no
    LLM was called (a verdict that did not come from a model endpoint)."""

    role: Role | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    requests: int = 0
    cached_requests: int = 0


class UsageMeter:
    """A chat function that keeps the replies of one call and the time since it was made."""

    def __init__(self, chat: Chat) -> None:
        self._chat = chat
        self._replies: list[ChatReply] = []
        self._started = time.perf_counter()

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        """The reply text, as the callers' prompt logic needs it."""
        reply = as_reply(self._chat(messages))
        self._replies.append(reply)
        return reply.text

    def usage(self, role: Role) -> CallUsage:
        """The call's cost so far: its requests' summed tokens and the elapsed wall time."""
        return CallUsage(
            role=role,
            prompt_tokens=_total([r.prompt_tokens for r in self._replies]),
            completion_tokens=_total([r.completion_tokens for r in self._replies]),
            latency_s=round(time.perf_counter() - self._started, USAGE_DECIMALS),
            requests=len(self._replies),
            cached_requests=sum(r.cached for r in self._replies),
        )


def _total(counts: list[int | None]) -> int | None:
    """The sum, or None when any count is missing: a partial sum would understate the cost."""
    if not counts or any(c is None for c in counts):
        return None
    return sum(c for c in counts if c is not None)


class JudgeVerdict(CallUsage):
    """A judge's answer: score in [0, 1], or None when no usable verdict came back, and
    what asking for it cost (CallUsage)."""

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
