"""Semantic validation (semantic_consistency, safety_compliance, factual_qa_check) and the
LLM judges behind it.

A judge sees the task's judge prompt, the candidate text (the parsed field, or the whole
report for target_key `full_text`) and, when the instance has one, the reference
conclusion. It answers a JSON object {"score": 0..1, "rationale": "..."}. A reply that is
not such an object is asked for once more; a second bad reply leaves the unit unscored
(flagged, out of the denominator), as does running without a judge: never a silent 0 or 1.
Every verdict from a model carries what it cost (CallUsage: role, tokens, wall time).
"""
from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from typing import Any

from validation.context import Chat, JudgeVerdict, Role, ScoringContext, UsageMeter
from validation.errors import MetricConfigError
from validation.unit import ScoreFunction, Unit, UnitOutcome, ground_truth, has_ground_truth, result, unscored

JUDGE_SYSTEM = (
    "You are the semantic judge of an EEG analysis benchmark. You receive grading "
    "instructions, the text to grade and, when there is one, a reference conclusion. Grade "
    "only by the instructions. Reply with one JSON object and nothing else: "
    '{"score": <number from 0 to 1>, "rationale": "<one or two sentences>"}.'
)
RETRY_NOTE = ('Your reply was not a JSON object with a numeric "score" between 0 and 1 and a '
              '"rationale". Reply again with only that object.')
MAX_CANDIDATE_CHARS = 20_000


def semantic_unit(kind: str) -> ScoreFunction:
    """The score function of one judge unit: the judge's verdict on the candidate text."""

    def unit(predicted: Any, params: Mapping[str, Any], context: ScoringContext | None = None) -> UnitOutcome:
        prompt = params.get("judge_prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise MetricConfigError("params.judge_prompt is missing or empty")
        if context is None or context.judge is None:
            return unscored(kind).model_copy(update={"detail": f"{kind}: no judge configured (--judge)"})
        if predicted is None or (isinstance(predicted, str) and not predicted.strip()):
            return result(0.0, f"{kind}: nothing to judge (field missing)")
        reference = ground_truth(params) if has_ground_truth(params) else None
        verdict = context.judge(prompt, _text(predicted), reference)
        context.record_judge(verdict)
        if verdict.score is None:
            return unscored(kind).model_copy(update={"detail": f"{kind}: judge gave no usable verdict ({verdict.error})"})
        return result(verdict.score, f"{kind} judge: {verdict.rationale[:300]}")

    unit.__name__ = kind
    return unit


JUDGE_UNITS = tuple(Unit(name=kind, score=semantic_unit(kind), deterministic=False, family="semantic")
                    for kind in ("semantic_consistency", "safety_compliance", "factual_qa_check"))


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text[-MAX_CANDIDATE_CHARS:]


class LLMJudge:
    """Text judge over any chat endpoint at temperature 0 in JSON mode."""

    role: Role = "judge"

    def __init__(self, chat: Chat, model: str) -> None:
        self.chat = chat
        self.model = model

    def __call__(self, judge_prompt: str, candidate: str, reference: Any) -> JudgeVerdict:
        """Judge a candidate text against the reference, if any."""
        user = f"Grading instructions:\n{judge_prompt}\n\n"
        if reference is not None:
            user += f"Reference conclusion:\n{_text(reference)}\n\n"
        user += f"Text to grade:\n<<<\n{candidate}\n>>>"
        return ask_for_verdict(self.chat, self.model, [{"role": "system", "content": JUDGE_SYSTEM},
                                                       {"role": "user", "content": user}], role=self.role)


class LLMImageJudge:
    """VLM judge: the image goes as a data URL in an OpenAI-style image_url part."""

    role: Role = "vlm_judge"

    def __init__(self, chat: Chat, model: str) -> None:
        self.chat = chat
        self.model = model

    def __call__(self, judge_prompt: str, image: bytes, media_type: str) -> JudgeVerdict:
        """Judge an image."""
        url = f"data:{media_type};base64,{base64.b64encode(image).decode('ascii')}"
        content = [{"type": "text", "text": f"Grading instructions:\n{judge_prompt}"},
                   {"type": "image_url", "image_url": {"url": url}}]
        return ask_for_verdict(self.chat, self.model, [{"role": "system", "content": JUDGE_SYSTEM},
                                                       {"role": "user", "content": content}], role=self.role)


def ask_for_verdict(chat: Chat, model: str, messages: list[dict[str, Any]], *, role: Role = "judge") -> JudgeVerdict:
    """Two tries at a well-formed verdict, with the cost of both; transport errors propagate
    to the caller."""
    meter = UsageMeter(chat)
    verdict = _two_tries(meter, model, messages)
    return verdict.model_copy(update=meter.usage(role).model_dump())


def _two_tries(chat: UsageMeter, model: str, messages: list[dict[str, Any]]) -> JudgeVerdict:
    reply = chat(messages)
    verdict = read_verdict(reply, model)
    if verdict.score is not None:
        return verdict
    retry = messages + [{"role": "assistant", "content": reply}, {"role": "user", "content": RETRY_NOTE}]
    second = chat(retry)
    verdict = read_verdict(second, model)
    if verdict.score is None:
        return verdict.model_copy(update={"error": f"malformed twice: {verdict.error}",
                                          "raw_reply": f"{reply}\n---\n{second}"})
    return verdict


def read_verdict(reply: str, model: str) -> JudgeVerdict:
    """A judge's reply as a verdict; score None (with the error) when it is not a valid one."""
    try:
        data = json.loads(reply)
    except (TypeError, ValueError):
        return JudgeVerdict(score=None, model=model, raw_reply=reply, error="reply is not JSON")
    if not isinstance(data, dict):
        return JudgeVerdict(score=None, model=model, raw_reply=reply, error="reply is not a JSON object")
    score = data.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score) \
            or not 0 <= score <= 1:
        return JudgeVerdict(score=None, model=model, raw_reply=reply, error=f"score {score!r} is not in [0, 1]")
    rationale = data.get("rationale")
    return JudgeVerdict(score=float(score), rationale=rationale if isinstance(rationale, str) else "",
                        model=model, raw_reply=reply)
