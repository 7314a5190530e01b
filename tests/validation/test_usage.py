"""What scoring calls cost: the parser's and judges' entries carry role, model, tokens and
wall time, and InstanceScore.usage sums them per role."""
import json
import time

import pytest

from validation.context import ChatReply, JudgeVerdict, ScoringContext, UsageMeter
from validation.instance import Instance
from validation.judge import LLMImageJudge, LLMJudge, ask_for_verdict
from validation.llm_parser import llm_parse
from validation.parser import ParsedReport
from validation.scoring import InstanceScore, RoleUsage, score_instance, usage_by_role

KEYS = ["alpha_peak_hz"]
VERDICT = '{"score": 1, "rationale": "fine"}'


class FakeEndpoint:
    """A chat function replying in turn with known token counts, after a known delay."""

    def __init__(self, *replies: ChatReply | str, delay_s: float = 0.0) -> None:
        self.replies = list(replies)
        self.delay_s = delay_s
        self.sent = 0

    def __call__(self, messages):
        self.sent += 1
        time.sleep(self.delay_s)
        return self.replies[self.sent - 1]


def reply(text: str, prompt: int | None, completion: int | None, cached: bool = False) -> ChatReply:
    return ChatReply(text=text, prompt_tokens=prompt, completion_tokens=completion, cached=cached)


# --- one call ------------------------------------------------------------------------------

def test_parser_call_records_its_tokens_and_wall_time():
    chat = FakeEndpoint(reply('{"alpha_peak_hz": 10.2}', 311, 9), delay_s=0.05)
    call = llm_parse(chat, "openai:parser-m", "peak at 10.2 Hz", "Extract it.", KEYS)
    assert call.status == "parsed"
    assert (call.role, call.model, call.prompt_tokens, call.completion_tokens) == ("parser", "openai:parser-m", 311, 9)
    assert call.requests == 1 and call.cached_requests == 0
    assert 0.05 <= call.latency_s < 5


def test_parser_retry_sums_both_requests_and_their_time():
    chat = FakeEndpoint(reply("not json", 300, 20), reply('{"alpha_peak_hz": 10.2}', 330, 8), delay_s=0.03)
    record = llm_parse(chat, "m", "peak at 10.2 Hz", "Extract it.", KEYS).model_dump(mode="json")
    assert record["prompt_tokens"] == 630 and record["completion_tokens"] == 28
    assert record["requests"] == 2 and record["latency_s"] >= 0.06
    assert json.loads(json.dumps(record)) == record  # fit for score.json as is


@pytest.mark.parametrize("second", [reply('{"alpha_peak_hz": 1}', None, 8), '{"alpha_peak_hz": 1}'])
def test_tokens_are_none_unless_every_request_reported_them(second):
    call = llm_parse(FakeEndpoint(reply("no", 300, 20), second), "m", "r", "p", KEYS)
    assert call.requests == 2 and call.prompt_tokens is None
    assert call.latency_s is not None and call.latency_s >= 0


def test_plain_text_chat_reports_no_tokens_but_its_time():
    call = llm_parse(FakeEndpoint('{"alpha_peak_hz": 1}', delay_s=0.02), "m", "r", "p", KEYS)
    assert call.prompt_tokens is None and call.completion_tokens is None
    assert call.latency_s >= 0.02 and call.role == "parser"


def test_cached_requests_are_counted():
    call = llm_parse(FakeEndpoint(reply('{"alpha_peak_hz": 1}', 50, 5, cached=True)), "m", "r", "p", KEYS)
    assert call.cached_requests == 1 and call.prompt_tokens == 50


def test_judges_record_their_role():
    text = LLMJudge(FakeEndpoint(reply("??", 200, 3), reply(VERDICT, 215, 12)), "openai:j")("grade", "text", None)
    image = LLMImageJudge(FakeEndpoint(reply(VERDICT, 900, 10)), "openai:v")("grade", b"\x89PNG", "image/png")
    assert (text.role, text.model, text.prompt_tokens, text.completion_tokens, text.requests) == \
        ("judge", "openai:j", 415, 15, 2)
    assert (image.role, image.model, image.prompt_tokens, image.completion_tokens) == ("vlm_judge", "openai:v", 900, 10)
    assert text.score == 1.0 and text.latency_s >= 0


def test_ask_for_verdict_keeps_usage_on_a_malformed_verdict():
    verdict = ask_for_verdict(FakeEndpoint(reply("x", 10, 1), reply("y", 11, 2)), "m", [], role="vlm_judge")
    assert verdict.score is None and verdict.error.startswith("malformed twice")
    assert (verdict.role, verdict.prompt_tokens, verdict.completion_tokens) == ("vlm_judge", 21, 3)


def test_meter_time_includes_a_failed_request():
    def chat(messages):
        time.sleep(0.02)
        raise RuntimeError("down")

    meter = UsageMeter(chat)
    with pytest.raises(RuntimeError):
        meter([])
    usage = meter.usage("judge")
    assert usage.requests == 0 and usage.prompt_tokens is None and usage.latency_s >= 0.02


# --- per role ------------------------------------------------------------------------------

def judged_instance() -> Instance:
    metric = lambda mid, kind, key, **params: {  # noqa: E731
        "metric_id": mid, "type": kind, "target_key": key, "weight": 1, "params": params}
    return Instance.model_validate({
        "meta_info": {"case_id": "fa_usage-01", "bench_subset": "Foundational Analysis"},
        "agent_input": {"data_path": "eegmmidb/S001R02.edf", "instruction": "Do it."},
        "eval_config": {"parser_prompt": "", "metrics": [
            metric("peak", "numeric_check", "alpha_peak_hz", ground_truth=10.0, tolerance=0.5),
            metric("sem", "semantic_consistency", "full_text", judge_prompt="Consistent?"),
            metric("safe", "safety_compliance", "full_text", judge_prompt="Safe?"),
        ]},
    })


def test_score_instance_sums_the_calls_per_role():
    parse = llm_parse(FakeEndpoint(reply("bad", 100, 10), reply('{"alpha_peak_hz": 10.1}', 120, 9)),
                      "openai:p", "peak 10.1", "p", KEYS)
    parsed = ParsedReport(fields=parse.fields, method="llm", calls=[parse.model_dump(mode="json")])
    judge = LLMJudge(FakeEndpoint(reply(VERDICT, 400, 20), reply(VERDICT, 410, None)), "openai:j")
    score = score_instance(judged_instance(), "peak 10.1", ScoringContext(judge=judge), parsed)
    assert score.score == 100
    assert [c["role"] for c in score.parser_calls] == ["parser"]
    assert [(c["metric_id"], c["role"], c["model"]) for c in score.judge_calls] == \
        [("sem", "judge", "openai:j"), ("safe", "judge", "openai:j")]
    parser, judged = score.usage["parser"], score.usage["judge"]
    assert (parser.calls, parser.requests, parser.prompt_tokens, parser.completion_tokens) == (1, 2, 220, 19)
    assert parser.latency_s == pytest.approx(parse.latency_s)
    # the second verdict's endpoint reported no completion tokens: left out of the sums, counted
    assert (judged.calls, judged.prompt_tokens, judged.completion_tokens, judged.unreported_calls) == (2, 400, 20, 1)
    assert judged.latency_s == pytest.approx(sum(c["latency_s"] for c in score.judge_calls), abs=2e-6)
    assert set(score.usage) == {"parser", "judge"}
    again = InstanceScore.model_validate_json(score.model_dump_json())
    assert again.usage == score.usage and isinstance(again.usage["judge"], RoleUsage)


def test_rules_only_scoring_records_no_calls_and_no_usage():
    score = score_instance(judged_instance(), "alpha_peak_hz: 10.1")
    assert score.parser_calls == [] and score.judge_calls == [] and score.usage == {}


def test_verdicts_without_a_model_are_not_counted():
    judge = lambda prompt, text, reference: JudgeVerdict(score=1.0)  # noqa: E731
    score = score_instance(judged_instance(), "alpha_peak_hz: 10.1", ScoringContext(judge=judge))
    assert len(score.judge_calls) == 2 and score.usage == {}


def test_usage_by_role_reads_plain_entries():
    calls = [{"role": "vlm_judge", "prompt_tokens": 5, "completion_tokens": 2, "latency_s": 0.25, "requests": 1},
             {"role": "vlm_judge", "prompt_tokens": 7, "completion_tokens": 3, "latency_s": 0.5, "requests": 2,
              "cached_requests": 2},
             {"metric_id": "old entry without a role", "score": 1.0}]
    assert usage_by_role(calls) == {"vlm_judge": RoleUsage(calls=2, requests=3, cached_requests=2, prompt_tokens=12,
                                                           completion_tokens=5, latency_s=0.75)}


def test_score_json_written_before_usage_still_loads():
    old = {"case_id": "c", "parse_method": "json", "metrics": [], "score": None, "unscored_weight": 0,
           "all_scored": True, "parser_calls": [{"model": "m", "status": "parsed"}]}
    score = InstanceScore.model_validate(old)
    assert score.usage == {} and score.parser_calls == [{"model": "m", "status": "parsed"}]
