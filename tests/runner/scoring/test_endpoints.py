"""Scoring endpoints: the on-disk reply cache and how a role's spec is resolved."""
import json
from pathlib import Path

import pytest

from runner.core.paths import Environment, Paths
from runner.core.transcript import Usage
from runner.models.base import Completion
from runner.models.endpoint import Endpoint, EndpointError
from runner.models.openai_client import JSON_MODE, json_sender
from runner.scoring.endpoints import resolve
from validation.context import ChatReply

ROOT = Path(__file__).resolve().parents[3]


class CountingSend:
    def __init__(self):
        self.calls = 0

    def __call__(self, messages):
        self.calls += 1
        return f"reply-{self.calls}"


MSG_A = [{"role": "system", "content": "s"}, {"role": "user", "content": "report A"}]
MSG_B = [{"role": "system", "content": "s"}, {"role": "user", "content": "report B"}]


# --- cache ---------------------------------------------------------------------------------

def test_identical_call_is_served_from_disk(tmp_path):
    send = CountingSend()
    ep = Endpoint("parser", "openai:m1", send, cache_dir=tmp_path / "cache")
    assert ep.chat(MSG_A) == "reply-1"
    assert ep.chat(MSG_A) == "reply-1"
    assert send.calls == 1
    files = list((tmp_path / "cache").rglob("*.json"))
    assert len(files) == 1
    assert json.loads(files[0].read_text()) == {"model": "openai:m1", "reply": "reply-1",
                                                "prompt_tokens": None, "completion_tokens": None}


def test_different_messages_call_again(tmp_path):
    send = CountingSend()
    ep = Endpoint("parser", "openai:m1", send, cache_dir=tmp_path)
    assert ep.chat(MSG_A) == "reply-1"
    assert ep.chat(MSG_B) == "reply-2"
    assert ep.chat(MSG_A) == "reply-1" and ep.chat(MSG_B) == "reply-2"
    assert send.calls == 2


def test_cache_survives_a_new_endpoint_and_ignores_dict_order(tmp_path):
    Endpoint("judge", "openai:m1", CountingSend(), cache_dir=tmp_path).chat(MSG_A)
    send = CountingSend()
    again = Endpoint("judge", "openai:m1", send, cache_dir=tmp_path)
    reordered = [{"content": m["content"], "role": m["role"]} for m in MSG_A]
    assert again.chat(reordered) == "reply-1"
    assert send.calls == 0


def test_cache_is_per_model(tmp_path):
    Endpoint("parser", "openai:m1", CountingSend(), cache_dir=tmp_path).chat(MSG_A)
    send = CountingSend()
    assert Endpoint("parser", "openai:m2", send, cache_dir=tmp_path).chat(MSG_A) == "reply-1"
    assert send.calls == 1


def test_no_cache_dir_always_sends(tmp_path):
    send = CountingSend()
    ep = Endpoint("parser", "m", send)
    ep.chat(MSG_A)
    ep.chat(MSG_A)
    assert send.calls == 2


def test_failed_send_caches_nothing(tmp_path):
    def send(messages):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        Endpoint("parser", "m", send, cache_dir=tmp_path).chat(MSG_A)
    assert list(tmp_path.rglob("*.json")) == []


# --- usage ----------------------------------------------------------------------------------

def test_usage_is_cached_with_the_reply_and_marked_cached(tmp_path):
    sent = []

    def send(messages):
        sent.append(messages)
        return ChatReply(text="reply", prompt_tokens=120, completion_tokens=7)

    ep = Endpoint("parser", "openai:m1", send, cache_dir=tmp_path)
    assert ep.ask(MSG_A) == ChatReply(text="reply", prompt_tokens=120, completion_tokens=7, cached=False)
    assert ep.ask(MSG_A) == ChatReply(text="reply", prompt_tokens=120, completion_tokens=7, cached=True)
    assert len(sent) == 1
    entry = json.loads(next(tmp_path.rglob("*.json")).read_text())
    assert (entry["prompt_tokens"], entry["completion_tokens"]) == (120, 7)


def test_cache_entry_written_before_usage_reports_none(tmp_path):
    ep = Endpoint("judge", "openai:m1", CountingSend(), cache_dir=tmp_path)
    ep.chat(MSG_A)
    path = next(tmp_path.rglob("*.json"))
    path.write_text(json.dumps({"model": "openai:m1", "reply": "old"}))
    assert ep.ask(MSG_A) == ChatReply(text="old", cached=True)


class FakeClient:
    """OpenAIModel.complete with known usage; records the extra request options."""

    def __init__(self, usage):
        self.usage = usage
        self.extra = []

    def complete(self, messages, tools=None, **extra):
        self.extra.append(extra)
        return Completion(text='{"a": 1}', usage=self.usage, latency_s=0.5)


def test_openai_sender_passes_the_endpoints_usage_on():
    client = FakeClient(Usage(prompt_tokens=812, completion_tokens=31))
    assert json_sender(client)(MSG_A) == ChatReply(text='{"a": 1}', prompt_tokens=812, completion_tokens=31)
    assert client.extra == [{"response_format": JSON_MODE}]
    assert json_sender(FakeClient(Usage()))(MSG_A) == ChatReply(text='{"a": 1}')


# --- resolve --------------------------------------------------------------------------------

def script(tmp_path, name, replies):
    path = tmp_path / name
    path.write_text(json.dumps({"replies": replies}))
    return path


def res(role, spec, tmp_path, evaluated=None, environ=None):
    env = Environment(paths=Paths(project_root=ROOT), variables=environ if environ is not None else {})
    return resolve(role, spec, evaluated=evaluated, env=env, cache_dir=tmp_path / "cache")


OPENAI_ENV = {"EEGBENCH_BASE_URL": "http://127.0.0.1:9/v1", "EEGBENCH_API_KEY": "sk-test-secret"}


def test_spec_argument_beats_environment(tmp_path):
    a, b = script(tmp_path, "a.json", ["A"]), script(tmp_path, "b.json", ["B"])
    ep = res("parser", f"script:{a}", tmp_path, evaluated="openai:evalm",
             environ={"EEGBENCH_PARSER_MODEL": f"script:{b}", **OPENAI_ENV})
    assert ep.model == "script:a.json" and ep.chat(MSG_A) == "A"


def test_environment_beats_evaluated_model(tmp_path):
    b = script(tmp_path, "b.json", ["B"])
    ep = res("parser", None, tmp_path, evaluated="openai:evalm",
             environ={"EEGBENCH_PARSER_MODEL": f"script:{b}", **OPENAI_ENV})
    assert ep.model == "script:b.json" and ep.chat(MSG_A) == "B"


def test_environment_is_per_role(tmp_path):
    j = script(tmp_path, "j.json", ["J"])
    env = {"EEGBENCH_JUDGE_MODEL": f"script:{j}"}
    assert res("judge", None, tmp_path, environ=env).model == "script:j.json"
    assert res("vlm", None, tmp_path, environ=env) is None
    assert res("parser", None, tmp_path, environ=env) is None


def test_parser_falls_back_to_the_evaluated_openai_model(tmp_path):
    ep = res("parser", None, tmp_path, evaluated="openai:evalm", environ=dict(OPENAI_ENV))
    try:
        assert ep.model == "openai:evalm" and ep.role == "parser"
        assert ep.settings == {"base_url": "http://127.0.0.1:9/v1"}
        assert "sk-test-secret" not in json.dumps(ep.describe())
    finally:
        ep.close()


@pytest.mark.parametrize("role", ["judge", "vlm"])
def test_judges_never_fall_back_to_the_evaluated_model(tmp_path, role):
    assert res(role, None, tmp_path, evaluated="openai:evalm", environ=dict(OPENAI_ENV)) is None


@pytest.mark.parametrize("evaluated", [None, "oracle", "null", "script:runs/x.json", "replay:runs/r"])
def test_parser_without_an_evaluated_endpoint_is_none(tmp_path, evaluated):
    assert res("parser", None, tmp_path, evaluated=evaluated, environ=dict(OPENAI_ENV)) is None


def test_none_spec_wins_over_environment_and_evaluated(tmp_path):
    j = script(tmp_path, "j.json", ["J"])
    env = {"EEGBENCH_PARSER_MODEL": f"script:{j}", "EEGBENCH_JUDGE_MODEL": f"script:{j}", **OPENAI_ENV}
    assert res("parser", "none", tmp_path, evaluated="openai:evalm", environ=env) is None
    assert res("judge", "none", tmp_path, environ=env) is None
    assert res("parser", None, tmp_path, evaluated="openai:evalm",
               environ={"EEGBENCH_PARSER_MODEL": "none", **OPENAI_ENV}) is None


def test_script_endpoint_replies_in_turn_and_is_not_cached(tmp_path):
    s = script(tmp_path, "s.json", ["one", "two"])
    ep = res("judge", f"script:{s}", tmp_path)
    assert [ep.chat(MSG_A) for _ in range(3)] == ["one", "two", "one"]
    assert ep.cache_dir is None
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("role", ["parser", "judge", "vlm"])
@pytest.mark.parametrize("content", [
    None,  # missing file
    "not json",
    json.dumps(["a"]),
    json.dumps({"answers": ["a"]}),
    json.dumps({"replies": []}),
    json.dumps({"replies": "a"}),
    json.dumps({"replies": ["a", 2]}),
])
def test_bad_script_file_names_the_role(tmp_path, role, content):
    path = tmp_path / "script.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(EndpointError) as caught:
        res(role, f"script:{path}", tmp_path)
    assert str(caught.value).startswith(role) and str(path) in str(caught.value)


@pytest.mark.parametrize("env", [
    {},
    {"EEGBENCH_JUDGE_BASE_URL": "http://127.0.0.1:9/v1"},
    {"EEGBENCH_JUDGE_API_KEY": "k"},
    {"EEGBENCH_BASE_URL": "http://127.0.0.1:9/v1"},
])
def test_openai_without_url_or_key_names_the_variables(tmp_path, env):
    with pytest.raises(EndpointError) as caught:
        res("judge", "openai:judge-model", tmp_path, environ=env)
    message = str(caught.value)
    assert "EEGBENCH_JUDGE_BASE_URL" in message and "EEGBENCH_JUDGE_API_KEY" in message
    assert "judge" in message and "judge-model" in message


def test_role_variables_and_bare_name(tmp_path):
    env = {"EEGBENCH_VLM_BASE_URL": "http://user:pw@127.0.0.1:9/v1?token=t", "EEGBENCH_VLM_API_KEY": "k"}
    ep = res("vlm", "qwen-vl", tmp_path, environ=env)
    try:
        assert ep.model == "openai:qwen-vl" and ep.role == "vlm"
        assert ep.settings["base_url"] == "http://127.0.0.1:9/v1"
        assert ep.cache_dir == tmp_path / "cache"
    finally:
        ep.close()
    # the judge's variables are not the vlm's
    with pytest.raises(EndpointError):
        res("judge", "qwen-vl", tmp_path, environ=env)
