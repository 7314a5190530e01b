"""The semantic judge: verdict parsing, one retry, and the semantic units' unscored rules."""
import base64
import json

import pytest

from validation.context import JudgeVerdict, ScoringContext
from validation.errors import MetricConfigError
from validation.judge import (
    JUDGE_SYSTEM,
    RETRY_NOTE,
    LLMImageJudge,
    LLMJudge,
    ask_for_verdict,
    read_verdict,
    semantic_unit,
)


class FakeChat:
    """Replies in turn; records every message list it was sent."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.sent: list[list[dict]] = []

    def __call__(self, messages):
        self.sent.append(json.loads(json.dumps(messages)))  # a snapshot, not a live reference
        return self.replies[len(self.sent) - 1]


# --- read_verdict ----------------------------------------------------------------------------

def test_read_verdict_valid():
    verdict = read_verdict('{"score": 0.6, "rationale": "mostly right"}', "judge-m")
    assert verdict.score == 0.6 and verdict.rationale == "mostly right"
    assert verdict.model == "judge-m" and verdict.error is None
    assert verdict.raw_reply == '{"score": 0.6, "rationale": "mostly right"}'


@pytest.mark.parametrize("reply, score", [('{"score": 1}', 1.0), ('{"score": 0}', 0.0),
                                          ('{"score": 1.0, "rationale": 5}', 1.0)])
def test_read_verdict_edges_of_range(reply, score):
    verdict = read_verdict(reply, "m")
    assert verdict.score == score and isinstance(verdict.score, float)
    assert verdict.rationale == ""


@pytest.mark.parametrize("reply", [
    "the answer is good, 0.9",
    "",
    '```json\n{"score": 0.9}\n```',
    "[0.9]",
    '[{"score": 0.9}]',
    '"0.9"',
    "0.9",
    '{"score": 1.5}',
    '{"score": -0.1}',
    '{"score": true}',
    '{"score": false}',
    '{"score": NaN}',
    '{"score": Infinity}',
    '{"score": "0.9"}',
    '{"score": null}',
    '{"rationale": "no score"}',
    None,
])
def test_read_verdict_rejects(reply):
    verdict = read_verdict(reply, "m")
    assert verdict.score is None
    assert verdict.error
    assert verdict.raw_reply == reply


# --- ask_for_verdict: exactly one retry ----------------------------------------------------------

MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "grade this"}]


def test_good_first_reply_calls_once():
    chat = FakeChat('{"score": 0.8, "rationale": "ok"}', '{"score": 0.1}')
    verdict = ask_for_verdict(chat, "m", MESSAGES)
    assert verdict.score == 0.8 and len(chat.sent) == 1


def test_bad_then_good_retries_once_with_the_bad_reply_shown():
    chat = FakeChat("I think 0.8", '{"score": 0.8, "rationale": "fine"}', '{"score": 0.0}')
    verdict = ask_for_verdict(chat, "m", MESSAGES)
    assert verdict.score == 0.8 and verdict.rationale == "fine"
    assert len(chat.sent) == 2
    assert chat.sent[1][:2] == MESSAGES
    assert chat.sent[1][2] == {"role": "assistant", "content": "I think 0.8"}
    assert chat.sent[1][3] == {"role": "user", "content": RETRY_NOTE}


def test_bad_twice_gives_no_score_and_keeps_both_replies():
    chat = FakeChat("not json", '{"score": 7}', '{"score": 1}')
    verdict = ask_for_verdict(chat, "m", MESSAGES)
    assert verdict.score is None
    assert len(chat.sent) == 2
    assert "not json" in verdict.raw_reply and '{"score": 7}' in verdict.raw_reply
    assert "twice" in verdict.error


def test_transport_errors_propagate():
    def chat(messages):
        raise ConnectionError("down")

    with pytest.raises(ConnectionError):
        ask_for_verdict(chat, "m", MESSAGES)


# --- LLMJudge / LLMImageJudge messages ---------------------------------------------------------

def test_text_judge_messages_hold_prompt_reference_and_candidate():
    chat = FakeChat('{"score": 1, "rationale": "same"}')
    verdict = LLMJudge(chat, "judge-x")("Grade agreement.", "Alpha is dominant.", "Alpha dominates.")
    assert verdict.score == 1.0 and verdict.model == "judge-x"
    system, user = chat.sent[0]
    assert system == {"role": "system", "content": JUDGE_SYSTEM}
    assert "Grade agreement." in user["content"]
    assert "Alpha dominates." in user["content"] and "Alpha is dominant." in user["content"]
    assert user["content"].index("Alpha dominates.") < user["content"].index("Alpha is dominant.")


def test_text_judge_without_reference_says_nothing_about_one():
    chat = FakeChat('{"score": 0.5}')
    LLMJudge(chat, "j")("Is this safe?", "Take 3 pills.", None)
    assert "Reference" not in chat.sent[0][1]["content"]
    assert "None" not in chat.sent[0][1]["content"]


def test_image_judge_sends_a_data_url():
    image = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    chat = FakeChat('{"score": 0.25, "rationale": "no peak"}')
    verdict = LLMImageJudge(chat, "vlm")("Is there a peak?", image, "image/png")
    assert verdict.score == 0.25
    user = chat.sent[0][1]
    parts = user["content"]
    text = [p for p in parts if p["type"] == "text"]
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    assert len(text) == 1 and "Is there a peak?" in text[0]["text"]
    assert len(urls) == 1
    prefix = "data:image/png;base64,"
    assert urls[0].startswith(prefix)
    assert base64.b64decode(urls[0][len(prefix):]) == image


# --- semantic_unit -------------------------------------------------------------------------

class FakeJudge:
    def __init__(self, verdict: JudgeVerdict) -> None:
        self.verdict = verdict
        self.calls = []

    def __call__(self, prompt, candidate, reference):
        self.calls.append((prompt, candidate, reference))
        return self.verdict


PARAMS = {"judge_prompt": "Does the conclusion match the reference?", "ground_truth": "alpha peak at 10 Hz"}


@pytest.mark.parametrize("kind", ["semantic_consistency", "safety_compliance", "factual_qa_check"])
def test_no_judge_is_unscored_never_zero_or_one(kind):
    unit = semantic_unit(kind)
    for context in (None, ScoringContext()):
        outcome = unit("a conclusion", PARAMS, context)
        assert outcome.scored is False and outcome.score is None
        assert kind in outcome.detail


@pytest.mark.parametrize("params", [{}, {"judge_prompt": ""}, {"judge_prompt": "   "}, {"judge_prompt": 3}])
def test_missing_judge_prompt_is_a_config_error(params):
    unit = semantic_unit("semantic_consistency")
    judge = FakeJudge(JudgeVerdict(score=1.0))
    with pytest.raises(MetricConfigError):
        unit("text", params, ScoringContext(judge=judge))
    with pytest.raises(MetricConfigError):
        unit("text", params, None)
    assert judge.calls == []


@pytest.mark.parametrize("candidate", [None, "", "   \n"])
def test_empty_candidate_scores_zero_without_asking(candidate):
    judge = FakeJudge(JudgeVerdict(score=1.0))
    ctx = ScoringContext(judge=judge)
    outcome = semantic_unit("factual_qa_check")(candidate, PARAMS, ctx.for_metric("m1"))
    assert outcome.scored and outcome.score == 0.0
    assert judge.calls == [] and ctx.judge_calls == []


def test_judge_score_and_record():
    judge = FakeJudge(JudgeVerdict(score=0.7, rationale="close enough", model="jm"))
    ctx = ScoringContext(judge=judge)
    outcome = semantic_unit("semantic_consistency")("alpha peak near 10 Hz", PARAMS, ctx.for_metric("m_sem"))
    assert outcome.scored and outcome.score == 0.7
    assert judge.calls == [(PARAMS["judge_prompt"], "alpha peak near 10 Hz", "alpha peak at 10 Hz")]
    # a verdict that came from no model endpoint records no role and no cost
    assert ctx.judge_calls == [{"metric_id": "m_sem", "score": 0.7, "rationale": "close enough", "model": "jm",
                                "raw_reply": None, "error": None, "role": None, "prompt_tokens": None,
                                "completion_tokens": None, "latency_s": None, "requests": 0, "cached_requests": 0}]


def test_reference_from_gt_value_and_none():
    judge = FakeJudge(JudgeVerdict(score=1.0))
    unit = semantic_unit("safety_compliance")
    unit("x", {"judge_prompt": "p", "gt_value": "refuse the diagnosis"}, ScoringContext(judge=judge))
    unit("x", {"judge_prompt": "p"}, ScoringContext(judge=judge))
    unit("x", {"judge_prompt": "p", "ground_truth": "older key", "gt_value": "wins"}, ScoringContext(judge=judge))
    unit("x", {"judge_prompt": "p", "ground_truth": "read too"}, ScoringContext(judge=judge))
    # gt_value first: the key BrainBench's scorer reads, so both runners score a file alike
    assert [c[2] for c in judge.calls] == ["refuse the diagnosis", None, "wins", "read too"]


def test_non_text_candidate_is_sent_as_json():
    judge = FakeJudge(JudgeVerdict(score=1.0))
    semantic_unit("semantic_consistency")({"band": "alpha", "hz": 10}, PARAMS, ScoringContext(judge=judge))
    assert json.loads(judge.calls[0][1]) == {"band": "alpha", "hz": 10}


def test_judge_without_verdict_leaves_unit_unscored_and_recorded():
    judge = FakeJudge(JudgeVerdict(score=None, error="malformed twice", raw_reply="junk"))
    ctx = ScoringContext(judge=judge)
    outcome = semantic_unit("semantic_consistency")("text", PARAMS, ctx.for_metric("m1"))
    assert outcome.scored is False and outcome.score is None
    assert len(ctx.judge_calls) == 1 and ctx.judge_calls[0]["error"] == "malformed twice"


def test_llm_judge_through_the_unit_with_a_retry():
    chat = FakeChat("sure!", '{"score": 0.4, "rationale": "partly"}')
    ctx = ScoringContext(judge=LLMJudge(chat, "jm"))
    outcome = semantic_unit("semantic_consistency")("theta dominates", PARAMS, ctx.for_metric("m1"))
    assert outcome.score == 0.4 and len(chat.sent) == 2
    assert ctx.judge_calls[0]["model"] == "jm"
