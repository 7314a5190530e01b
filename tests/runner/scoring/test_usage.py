"""The Scorer records what its parser and judge endpoints cost in the InstanceScore: every
call's role, model, tokens and wall time, and the per-role sums, also when an endpoint fails."""
import json
import time

from runner.models.base import ModelError
from runner.models.endpoint import Endpoint
from runner.scoring.scorer import Scorer
from validation.context import ChatReply
from validation.instance import Instance
from validation.scoring import InstanceScore, RoleUsage


def instance() -> Instance:
    metric = lambda mid, kind, key, **params: {  # noqa: E731
        "metric_id": mid, "type": kind, "target_key": key, "weight": 1, "params": params}
    return Instance.model_validate({
        "meta_info": {"case_id": "FA-usage-001", "bench_subset": "Foundational Analysis"},
        "agent_input": {"data_path": "eegmmidb/S001R02.edf", "instruction": "Find the alpha peak."},
        "eval_config": {"parser_prompt": "Return alpha_peak_hz.", "metrics": [
            metric("peak", "numeric_check", "alpha_peak_hz", ground_truth=10.2, tolerance=0.5),
            metric("sem", "semantic_consistency", "full_text", judge_prompt="Consistent?"),
        ]},
    })


class Send:
    """An endpoint's send: known replies and token counts, a known delay, or a failure."""

    def __init__(self, *replies, delay_s=0.0, fail=False):
        self.replies = list(replies)
        self.delay_s = delay_s
        self.fail = fail
        self.sent = 0

    def __call__(self, messages):
        self.sent += 1
        time.sleep(self.delay_s)
        if self.fail:
            raise ModelError("endpoint down after 5 retries", infrastructure=True)
        text, prompt, completion = self.replies[min(self.sent, len(self.replies)) - 1]
        return ChatReply(text=text, prompt_tokens=prompt, completion_tokens=completion)


REPORT = "The alpha peak is at about ten hertz."


def score_with(parser_send, judge_send, tmp_path, mode="llm") -> InstanceScore:
    parser = Endpoint("parser", "openai:parser-m", parser_send, cache_dir=tmp_path / "cache")
    judge = Endpoint("judge", "openai:judge-m", judge_send, cache_dir=tmp_path / "cache")
    score = Scorer(mode, parser, judge, None).score(instance(), REPORT, None, [])
    return InstanceScore.model_validate_json(score.model_dump_json())  # as score.json holds it


def test_parser_and_judge_calls_carry_model_role_tokens_and_latency(tmp_path):
    parser = Send(('{"alpha_peak_hz": 10.0}', 412, 11), delay_s=0.05)
    judge = Send(('{"score": 1, "rationale": "yes"}', 530, 17), delay_s=0.02)
    score = score_with(parser, judge, tmp_path)
    assert score.score == 100
    [p] = score.parser_calls
    assert (p["role"], p["model"], p["prompt_tokens"], p["completion_tokens"], p["requests"]) == \
        ("parser", "openai:parser-m", 412, 11, 1)
    assert p["latency_s"] >= 0.05
    [j] = score.judge_calls
    assert (j["role"], j["model"], j["prompt_tokens"], j["completion_tokens"]) == ("judge", "openai:judge-m", 530, 17)
    assert j["latency_s"] >= 0.02
    assert score.usage == {
        "parser": RoleUsage(calls=1, requests=1, prompt_tokens=412, completion_tokens=11, latency_s=p["latency_s"]),
        "judge": RoleUsage(calls=1, requests=1, prompt_tokens=530, completion_tokens=17, latency_s=j["latency_s"]),
    }


def test_a_rescore_from_the_cache_keeps_the_tokens_and_counts_the_cached_requests(tmp_path):
    parser = Send(('not json', 400, 30), ('{"alpha_peak_hz": 10.0}', 430, 9))
    judge = Send(('{"score": 1, "rationale": "yes"}', 530, 17))
    first = score_with(parser, judge, tmp_path)
    again = score_with(Send(fail=True), Send(fail=True), tmp_path)  # every reply comes from the cache
    assert first.usage["parser"].prompt_tokens == again.usage["parser"].prompt_tokens == 830
    assert (first.usage["parser"].cached_requests, again.usage["parser"].cached_requests) == (0, 2)
    assert again.usage["judge"].cached_requests == again.usage["judge"].requests == 1
    assert again.score == first.score


def test_rules_mode_records_no_parser_usage(tmp_path):
    judge = Send(('{"score": 1, "rationale": "yes"}', 530, 17))
    score = score_with(Send(fail=True), judge, tmp_path, mode="rules")
    assert score.parser_calls == [] and set(score.usage) == {"judge"}


def test_a_failed_judge_call_records_its_time(tmp_path):
    score = score_with(Send(('{"alpha_peak_hz": 10.0}', 412, 11)), Send(delay_s=0.03, fail=True), tmp_path)
    [j] = score.judge_calls
    assert j["score"] is None and "judge endpoint failed" in j["error"]
    assert (j["role"], j["model"], j["prompt_tokens"]) == ("judge", "openai:judge-m", None)
    assert j["latency_s"] >= 0.03
    assert score.usage["judge"] == RoleUsage(calls=1, unreported_calls=1, latency_s=j["latency_s"])


def test_a_failed_parser_call_is_recorded_on_the_unscored_instance(tmp_path):
    judge = Send(('{"score": 1, "rationale": "yes"}', 530, 17))
    score = score_with(Send(delay_s=0.03, fail=True), judge, tmp_path)
    assert score.score is None and score.parse_method == "unparsed"
    [p] = score.parser_calls
    assert (p["role"], p["model"], p["status"], p["prompt_tokens"]) == ("parser", "openai:parser-m", "failed", None)
    assert p["latency_s"] >= 0.03 and "endpoint down" in p["error"]
    assert score.usage == {"parser": RoleUsage(calls=1, unreported_calls=1, latency_s=p["latency_s"])}
    assert json.loads(score.model_dump_json())["usage"]["parser"]["unreported_calls"] == 1
