"""OpenAIModel's retry policy against a real HTTP server on 127.0.0.1, and its settings."""
from __future__ import annotations

import json
import logging
import socket
import threading
import time

import pytest

from runner.models.base import ModelError
from runner.models.credentials import endpoint_from_env
from runner.models.openai_client import RETRY_AFTER_MAX_S, OpenAIModel
from tests.endpoint_stub import RawServer, ScriptedServer, completion_body, error, ok
from validation.errors import UserError

KEY = "sk-test-secret-0123456789"
MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]


def model(url: str, **kwargs) -> OpenAIModel:
    settings = {"backoff_base_s": 0.01, "backoff_cap_s": 0.05, "max_retries": 3, "timeout_s": 5.0}
    settings.update(kwargs)
    built = OpenAIModel("test-model", url, KEY, **settings)
    built.sleeps = []
    real_sleep = built._sleep

    def recording_sleep(seconds: float) -> None:
        built.sleeps.append(seconds)
        real_sleep(seconds)

    built._sleep = recording_sleep
    return built


def test_500_then_429_then_200_is_retried_and_usage_recorded(caplog):
    answers = [error(500), error(429, {"Retry-After": "0.02"}), ok("hello there")]
    caplog.set_level(logging.WARNING)
    with ScriptedServer(answers) as server:
        client = model(server.url, stop=["</execute>"], temperature=0.3, max_tokens=99)
        completion = client.session(None).complete(MESSAGES)
    assert completion.text == "hello there"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (11, 7)
    assert 0 < completion.latency_s < 5
    assert len(server.requests) == 3
    assert len(client.sleeps) == 2 and client.sleeps[1] >= 0.02  # Retry-After honoured
    sent = server.requests[-1]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["auth"] == f"Bearer {KEY}"
    assert sent["body"]["model"] == "test-model"
    assert sent["body"]["messages"] == MESSAGES
    assert (sent["body"]["temperature"], sent["body"]["max_tokens"]) == (0.3, 99)
    assert sent["body"]["stop"] == ["</execute>"]
    assert "retrying" in caplog.text
    assert KEY not in caplog.text


def test_dead_port_is_an_infrastructure_error_after_all_retries():
    with socket.socket() as probe:  # a port that was free a moment ago and now has no listener
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = model(f"http://127.0.0.1:{port}/v1", max_retries=2)
    began = time.perf_counter()
    with pytest.raises(ModelError) as info:
        client.session(None).complete(MESSAGES)
    assert info.value.infrastructure is True
    assert "after 3 attempts" in str(info.value)
    assert len(client.sleeps) == 2
    assert time.perf_counter() - began < 5
    assert KEY not in str(info.value)


def test_timeout_is_retried_then_infrastructure():
    # A timeout long enough for the request to reach the stub on a loaded machine (at 0.2 s
    # the second attempt timed out before the stub had read it), and far below the delay.
    with ScriptedServer([ok(delay=6.0), ok(delay=6.0)]) as server:
        client = model(server.url, timeout_s=1.5, max_retries=1)
        with pytest.raises(ModelError, match="Timeout") as info:
            client.session(None).complete(MESSAGES)
    assert info.value.infrastructure is True
    assert len(server.requests) == 2


def test_a_4xx_on_the_first_request_is_a_setup_error_and_not_retried():
    with ScriptedServer([error(400), ok()]) as server:
        with pytest.raises(ModelError, match="HTTP 400") as info:
            model(server.url).session(None).complete(MESSAGES)
    assert (info.value.kind, info.value.infrastructure) == ("setup", False)
    assert len(server.requests) == 1


def test_a_4xx_after_the_endpoint_answered_is_the_conversations():
    with ScriptedServer([ok(), error(422)]) as server:
        client = model(server.url)
        client.session(None).complete(MESSAGES)
        with pytest.raises(ModelError, match="HTTP 422") as info:
            client.session(None).complete(MESSAGES)
    assert info.value.kind == "rejected" and len(server.requests) == 2


@pytest.mark.parametrize("status", [401, 403, 404])
def test_setup_errors_are_not_retried(status):
    with ScriptedServer([ok(), error(status), ok()]) as server:
        client = model(server.url)
        client.session(None).complete(MESSAGES)  # even after a success: the key or model went bad
        with pytest.raises(ModelError, match="check the base URL, the API key") as info:
            client.session(None).complete(MESSAGES)
    assert (info.value.kind, info.value.infrastructure) == ("setup", False)
    assert len(server.requests) == 2


@pytest.mark.parametrize("status, message", [
    (400, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens."),
    (400, "the request exceeds the available context size, try increasing it"),  # llama.cpp
    (413, "prompt is too long: 210000 tokens > 200000 maximum"),
])
def test_context_overflow_is_the_models_failure_even_on_the_first_request(status, message):
    body = {"error": {"message": message, "type": "invalid_request_error", "code": "context_length_exceeded"}}
    with ScriptedServer([(status, body, {}, 0.0)]) as server:
        with pytest.raises(ModelError) as info:
            model(server.url).session(None).complete(MESSAGES)
    assert info.value.kind == "context_exceeded" and len(server.requests) == 1


def test_content_filter_stop_and_refusal_are_the_models():
    filtered = completion_body("I can")
    filtered["choices"][0]["finish_reason"] = "content_filter"
    refusal = completion_body("")
    refusal["choices"][0]["message"]["refusal"] = "I can't help with that."
    blocked = (400, {"error": {"message": "The response was filtered due to the prompt triggering content management policy", "code": "content_filter"}}, {}, 0.0)
    with ScriptedServer([(200, filtered, {}, 0.0), (200, refusal, {}, 0.0), blocked]) as server:
        client = model(server.url)
        kinds = []
        for _ in range(3):
            with pytest.raises(ModelError) as info:
                client.session(None).complete(MESSAGES)
            kinds.append(info.value.kind)
    assert kinds == ["refused", "refused", "refused"]


def test_a_truncated_json_body_is_retried_like_a_5xx():
    truncated = json.dumps(completion_body("cut"))[:37].encode()
    with RawServer([truncated, b"<html>bad gateway</html>"], [ok("whole")]) as server:
        completion = model(server.url).session(None).complete(MESSAGES)
    assert completion.text == "whole" and len(server.requests) == 3
    assert len(completion.retries) == 2 and "attempt 1 failed" in completion.retries[0]


def test_malformed_bodies_until_retries_run_out_are_transport_errors():
    truncated = json.dumps(completion_body("cut"))[:37].encode()
    with RawServer([truncated] * 4, []) as server:
        with pytest.raises(ModelError, match="giving up after 4 attempts") as info:
            model(server.url).session(None).complete(MESSAGES)
    assert info.value.kind == "transport" and info.value.infrastructure is True


def test_a_200_without_choices_is_retried():
    with ScriptedServer([(200, {"id": "x", "choices": []}, {}, 0.0), ok("second")]) as server:
        completion = model(server.url).session(None).complete(MESSAGES)
    assert completion.text == "second"
    assert len(server.requests) == 2


def test_backoff_is_full_jitter_capped_and_grows():
    client = OpenAIModel("m", "http://127.0.0.1:9/v1", KEY, backoff_base_s=1.0, backoff_cap_s=8.0)
    for attempt, bound in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (6, 8.0)]:
        delays = [client.backoff_delay(attempt) for _ in range(300)]
        assert all(0.0 <= d <= bound for d in delays)
        assert max(delays) > 0.8 * bound  # jitter spans the whole range, not a fixed step
        assert min(delays) < 0.2 * bound
    assert client.backoff_delay(0, retry_after=5.0) >= 5.0
    # The endpoint's Retry-After beats our cap (sooner would waste an attempt), up to a sane bound.
    assert client.backoff_delay(0, retry_after=500.0) == 500.0
    assert client.backoff_delay(0, retry_after=1e6) == RETRY_AFTER_MAX_S


def test_describe_records_settings_but_never_the_key():
    client = OpenAIModel(
        "gpt-x", "https://user:pw@api.example.com:8443/v1?token=abc", KEY, stop=["</execute>"]
    )
    described = client.describe()
    text = json.dumps(described)
    assert KEY not in text and "pw" not in text and "abc" not in text
    assert described["base_url"] == "https://api.example.com:8443/v1"
    assert described["name"] == "openai:gpt-x" and described["stop"] == ["</execute>"]


def test_env_prefers_eegbench_variables_then_falls_back_to_openai():
    env = {
        "EEGBENCH_BASE_URL": "http://a/v1",
        "EEGBENCH_API_KEY": "ka",
        "OPENAI_BASE_URL": "http://b/v1",
        "OPENAI_API_KEY": "kb",
    }
    assert endpoint_from_env(env) == ("http://a/v1", "ka")
    only_openai = {"OPENAI_BASE_URL": "http://b/v1", "OPENAI_API_KEY": "kb"}
    assert endpoint_from_env(only_openai) == ("http://b/v1", "kb")
    mixed = {"EEGBENCH_BASE_URL": "http://a/v1", "OPENAI_API_KEY": "kb"}
    assert endpoint_from_env(mixed) == ("http://a/v1", "kb")


def test_env_missing_names_the_variables():
    with pytest.raises(UserError) as info:
        endpoint_from_env({"OPENAI_BASE_URL": "http://b/v1", "EEGBENCH_API_KEY": ""})
    message = str(info.value)
    assert "EEGBENCH_API_KEY (or EEGBENCH_API_KEY_FILE) or OPENAI_API_KEY (or OPENAI_API_KEY_FILE)" in message
    assert "BASE_URL or" not in message  # the base URL was given
    with pytest.raises(UserError) as info:
        endpoint_from_env({})
    assert "set EEGBENCH_BASE_URL or OPENAI_BASE_URL and EEGBENCH_API_KEY (or" in str(info.value)


def test_close_cuts_a_pending_backoff_short():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = OpenAIModel(
        "m", f"http://127.0.0.1:{port}/v1", KEY, backoff_base_s=30.0, backoff_cap_s=30.0
    )
    client._random.uniform = lambda low, high: high  # make the first wait a full 30 s
    outcome = {}

    def call() -> None:
        try:
            client.session(None).complete(MESSAGES)
        except ModelError as exc:
            outcome["error"] = exc

    began = time.perf_counter()
    worker = threading.Thread(target=call)
    worker.start()
    time.sleep(0.5)
    client.close()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert time.perf_counter() - began < 5
    assert outcome["error"].infrastructure is True
