"""Parser modes: rules, llm, auto (the LLM only for what the rules missed)."""
import json

import pytest

from runner.models.base import ModelError
from runner.models.endpoint import Endpoint
from runner.scoring.parsing import ParserUnavailable, parse
from validation.instance import Instance

GT_SENTINEL = "GROUND-TRUTH-SENTINEL-7731"
PARSER_PROMPT = "Return alpha_peak_hz as a number and dominant_band as a band name."


def instance() -> Instance:
    return Instance.model_validate({
        "meta_info": {"case_id": "FA-alpha-001", "bench_subset": "Foundational Analysis"},
        "agent_input": {"data_path": "eegmmidb/S001R02.edf", "instruction": "Find the alpha peak."},
        "eval_config": {
            "parser_prompt": PARSER_PROMPT,
            "metrics": [
                {"metric_id": "m1", "type": "numeric_check", "target_key": "alpha_peak_hz", "weight": 50,
                 "params": {"ground_truth": 10.2, "tolerance": 0.5, "note": GT_SENTINEL}},
                {"metric_id": "m2", "type": "categorical_check", "target_key": "dominant_band", "weight": 30,
                 "params": {"ground_truth": GT_SENTINEL}},
                {"metric_id": "m3", "type": "semantic_consistency", "target_key": "full_text", "weight": 20,
                 "params": {"judge_prompt": "judge", "ground_truth": GT_SENTINEL}},
            ],
        },
    })


class FakeSend:
    def __init__(self, *replies):
        self.replies = list(replies)
        self.sent = []

    def __call__(self, messages):
        self.sent.append(json.loads(json.dumps(messages)))
        return self.replies[min(len(self.sent), len(self.replies)) - 1]


def endpoint(send) -> Endpoint:
    return Endpoint(role="parser", model="fake-parser", send=send)


BOTH_IN_LINES = "alpha_peak_hz: 10.4\ndominant_band: alpha\n"
ONE_IN_LINES = "alpha_peak_hz: 10.4\nThe posterior rhythm is clearly alpha-dominant."
PROSE = "I found a peak of about ten hertz, alpha dominant."


def test_rules_mode_never_calls_the_endpoint():
    send = FakeSend('{"alpha_peak_hz": 1, "dominant_band": "beta"}')
    parsed = parse("rules", endpoint(send), instance(), ONE_IN_LINES)
    assert send.sent == []
    assert parsed.fields == {"alpha_peak_hz": 10.4, "dominant_band": None}
    assert parsed.calls == []


@pytest.mark.parametrize("mode", ["auto", "llm"])
def test_no_endpoint_falls_back_to_rules(mode):
    parsed = parse(mode, None, instance(), ONE_IN_LINES)
    assert parsed.fields == {"alpha_peak_hz": 10.4, "dominant_band": None}
    assert parsed.method == "lines"


def test_llm_mode_asks_for_every_key_and_never_sends_ground_truth():
    send = FakeSend('{"alpha_peak_hz": 10.0, "dominant_band": "alpha"}')
    parsed = parse("llm", endpoint(send), instance(), PROSE)
    assert parsed.fields == {"alpha_peak_hz": 10.0, "dominant_band": "alpha"}
    assert parsed.method == "llm"
    assert len(send.sent) == 1
    text = json.dumps(send.sent)
    assert GT_SENTINEL not in text and "10.2" not in text
    user = send.sent[0][-1]["content"]
    assert PARSER_PROMPT in user and PROSE in user
    assert json.dumps(["alpha_peak_hz", "dominant_band"]) in user  # full_text is not a key
    assert len(parsed.calls) == 1 and parsed.calls[0]["model"] == "fake-parser"
    assert parsed.calls[0]["status"] == "parsed"


def test_llm_mode_unparsed_after_two_bad_replies():
    send = FakeSend("nope", "still nope")
    parsed = parse("llm", endpoint(send), instance(), PROSE)
    assert parsed.method == "unparsed"
    assert parsed.fields == {"alpha_peak_hz": None, "dominant_band": None}
    assert len(send.sent) == 2
    assert parsed.calls[0]["replies"] == ["nope", "still nope"]


def test_llm_mode_empty_report_does_not_call():
    send = FakeSend('{"alpha_peak_hz": 1}')
    parsed = parse("llm", endpoint(send), instance(), "  \n")
    assert send.sent == [] and parsed.method == "none"
    assert parsed.fields == {"alpha_peak_hz": None, "dominant_band": None}


def test_auto_asks_only_for_what_rules_missed_and_merges():
    send = FakeSend('{"dominant_band": "alpha", "alpha_peak_hz": 99.0}')
    parsed = parse("auto", endpoint(send), instance(), ONE_IN_LINES)
    assert len(send.sent) == 1
    user = send.sent[0][-1]["content"]
    assert json.dumps(["dominant_band"]) in user
    assert "alpha_peak_hz\"" not in user.split("Report:")[0]  # not asked for the key rules found
    # the rules' value stands; the LLM's extra key is dropped
    assert parsed.fields == {"alpha_peak_hz": 10.4, "dominant_band": "alpha"}
    assert parsed.method == "rules+llm"
    assert len(parsed.calls) == 1 and parsed.calls[0]["keys"] == ["dominant_band"]
    assert GT_SENTINEL not in json.dumps(send.sent)


def test_auto_does_not_call_when_rules_found_everything():
    send = FakeSend('{"dominant_band": "beta"}')
    parsed = parse("auto", endpoint(send), instance(), BOTH_IN_LINES)
    assert send.sent == []
    assert parsed.fields == {"alpha_peak_hz": 10.4, "dominant_band": "alpha"}
    assert parsed.method == "lines"


def test_auto_keeps_rules_method_when_llm_fills_nothing():
    send = FakeSend('{"dominant_band": null}')
    parsed = parse("auto", endpoint(send), instance(), ONE_IN_LINES)
    assert len(send.sent) == 1
    assert parsed.fields == {"alpha_peak_hz": 10.4, "dominant_band": None}
    assert parsed.method == "lines"
    assert len(parsed.calls) == 1


def test_auto_with_empty_report_does_not_call():
    send = FakeSend('{"dominant_band": "alpha"}')
    parsed = parse("auto", endpoint(send), instance(), "")
    assert send.sent == []
    assert parsed.fields == {"alpha_peak_hz": None, "dominant_band": None}


@pytest.mark.parametrize("mode, report", [("llm", PROSE), ("auto", ONE_IN_LINES)])
def test_model_error_is_parser_unavailable(mode, report):
    def send(messages):
        raise ModelError("connection refused after 5 retries", infrastructure=True)

    with pytest.raises(ParserUnavailable) as caught:
        parse(mode, endpoint(send), instance(), report)
    assert "FA-alpha-001" in str(caught.value) and "fake-parser" in str(caught.value)


def judge_only_instance() -> Instance:
    data = instance().model_dump()
    data["eval_config"]["metrics"] = [m for m in data["eval_config"]["metrics"] if m["target_key"] == "full_text"]
    return Instance.model_validate(data)


@pytest.mark.parametrize("mode", ["llm", "auto"])
def test_no_target_keys_needs_no_parser_call(mode):
    """An instance whose only metric judges the full text has nothing to extract: the parser
    endpoint is not asked, so its outage cannot leave the instance unscored."""
    def send(messages):
        raise ModelError("parser endpoint down", infrastructure=True)

    parsed = parse(mode, endpoint(send), judge_only_instance(), PROSE)
    assert parsed.fields == {}
    assert parsed.calls == []
