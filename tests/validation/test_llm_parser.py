"""The LLM Parser Agent: what it sends, what it keeps, one retry, unparsed."""
import json

import pytest

from validation.llm_parser import PARSER_SYSTEM, RETRY_NOTE, llm_parse, messages_for, prompt_hash, read_fields
from validation.parser import MAX_REPORT_CHARS

KEYS = ["alpha_peak_hz", "dominant_band"]
PROMPT = "Extract alpha_peak_hz (Hz, number) and dominant_band (delta|theta|alpha|beta)."
REPORT = "The alpha peak sits at 10.2 Hz; alpha dominates the posterior channels."


class FakeChat:
    def __init__(self, *replies):
        self.replies = list(replies)
        self.sent = []

    def __call__(self, messages):
        self.sent.append(json.loads(json.dumps(messages)))
        return self.replies[len(self.sent) - 1]


def test_messages_hold_prompt_keys_and_report():
    system, user = messages_for(REPORT, PROMPT, KEYS)
    assert system == {"role": "system", "content": PARSER_SYSTEM}
    assert user["role"] == "user"
    assert PROMPT in user["content"] and REPORT in user["content"]
    assert json.dumps(KEYS) in user["content"]


def test_long_report_is_cut_to_its_tail():
    report = "HEAD-MARKER " + "x" * (MAX_REPORT_CHARS + 10) + " TAIL-MARKER"
    user = messages_for(report, PROMPT, KEYS)[1]["content"]
    assert "TAIL-MARKER" in user and "HEAD-MARKER" not in user


def test_parsed_first_time():
    chat = FakeChat('{"alpha_peak_hz": 10.2, "dominant_band": "alpha"}')
    call = llm_parse(chat, "parser-m", REPORT, PROMPT, KEYS)
    assert call.status == "parsed" and call.error is None
    assert call.fields == {"alpha_peak_hz": 10.2, "dominant_band": "alpha"}
    assert call.replies == ['{"alpha_peak_hz": 10.2, "dominant_band": "alpha"}']
    assert len(chat.sent) == 1
    assert call.model == "parser-m" and call.keys == KEYS
    assert call.prompt_sha256 == prompt_hash(PROMPT, KEYS)
    import hashlib
    assert call.report_sha256 == hashlib.sha256(REPORT.encode()).hexdigest()


def test_retry_once_then_parsed():
    chat = FakeChat("Sure! alpha_peak_hz is 10.2", '{"alpha_peak_hz": 10.2}', '{"alpha_peak_hz": 99}')
    call = llm_parse(chat, "m", REPORT, PROMPT, KEYS)
    assert call.status == "parsed"
    assert call.fields == {"alpha_peak_hz": 10.2, "dominant_band": None}
    assert len(chat.sent) == 2
    assert chat.sent[1][-2] == {"role": "assistant", "content": "Sure! alpha_peak_hz is 10.2"}
    assert chat.sent[1][-1] == {"role": "user", "content": RETRY_NOTE}
    assert call.replies == ["Sure! alpha_peak_hz is 10.2", '{"alpha_peak_hz": 10.2}']


@pytest.mark.parametrize("first, second", [("not json", "[1, 2]"), ('"a string"', "null"),
                                           ("```json\n{}\n```", "{bad json")])
def test_unparsed_after_two_bad_replies(first, second):
    chat = FakeChat(first, second, '{"alpha_peak_hz": 1}')
    call = llm_parse(chat, "m", REPORT, PROMPT, KEYS)
    assert call.status == "unparsed"
    assert call.fields == {"alpha_peak_hz": None, "dominant_band": None}
    assert call.replies == [first, second]
    assert len(chat.sent) == 2
    assert call.error and "twice" in call.error


def test_extra_keys_dropped_missing_null_and_not_stated_strings_none():
    reply = json.dumps({"alpha_peak_hz": "N/A", "dominant_band": "alpha", "ground_truth": 10.0, "extra": 1})
    fields, error = read_fields(reply, KEYS)
    assert fields == {"alpha_peak_hz": None, "dominant_band": "alpha"} and error == ""
    fields, _ = read_fields('{"dominant_band": "theta"}', KEYS)
    assert fields == {"alpha_peak_hz": None, "dominant_band": "theta"}


@pytest.mark.parametrize("value", ["N/A", "n/a", "null", "None", "", "  ", "Not stated"])
def test_not_stated_spellings_become_none(value):
    fields, _ = read_fields(json.dumps({"alpha_peak_hz": value}), ["alpha_peak_hz"])
    assert fields == {"alpha_peak_hz": None}


@pytest.mark.parametrize("value", [0, 0.0, False, [], "0", "alpha", [1, 2], {"a": 1}])
def test_real_values_are_kept_as_given(value):
    fields, _ = read_fields(json.dumps({"k": value}), ["k"])
    assert fields == {"k": value}


def test_prompt_hash_changes_with_prompt_and_keys():
    base = prompt_hash(PROMPT, KEYS)
    assert base == prompt_hash(PROMPT, list(KEYS))
    assert prompt_hash(PROMPT + " ", KEYS) != base
    assert prompt_hash(PROMPT, KEYS[:1]) != base
    assert prompt_hash(PROMPT, list(reversed(KEYS))) != base
    assert prompt_hash("", []) != prompt_hash("", [""])


def test_transport_error_propagates():
    def chat(messages):
        raise TimeoutError("no answer")

    with pytest.raises(TimeoutError):
        llm_parse(chat, "m", REPORT, PROMPT, KEYS)
