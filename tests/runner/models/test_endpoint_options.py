"""What OpenAIModel sends and how it paces an endpoint: provider options, reasoning effort,
the reply-limit field, a droppable temperature, reasoning tokens, the message for a rejected
parameter, Retry-After in the retry notes, and the connection cap, against real HTTP stubs."""
from __future__ import annotations

import re
import threading
import time

import pytest

from runner.core.settings import ModelSettings
from runner.models.base import ModelError
from runner.models.openai_client import OpenAIModel, settings_options
from runner.models.ratelimit import EndpointLimiter
from runner.models.request_body import (
    check_model_args,
    flag_fields,
    model_args_from,
    parse_model_arg,
    reasoning_fields,
    rejected_parameter,
)
from tests.endpoint_stub import Fault, LimitedEndpoint, ScriptedServer, completion_body, error, ok
from validation.errors import UserError

KEY = "sk-test"
MESSAGES = [{"role": "user", "content": "hi"}]


def model(url: str, **kwargs) -> OpenAIModel:
    settings = {"backoff_base_s": 0.01, "backoff_cap_s": 0.05, "max_retries": 3, "timeout_s": 5.0}
    return OpenAIModel("test-model", url, KEY, **{**settings, **kwargs})


@pytest.mark.parametrize("text, expected", [
    ("top_p=0.9", ("top_p", 0.9)),
    ("seed=7", ("seed", 7)),
    ("logprobs=true", ("logprobs", True)),
    ('provider={"order": ["a", "b"]}', ("provider", {"order": ["a", "b"]})),
    ("service_tier=flex", ("service_tier", "flex")),  # not JSON: plain text
    ("user=a=b", ("user", "a=b")),  # only the first '=' splits
    ("suffix=", ("suffix", "")),
])
def test_model_arg_values_are_json_else_text(text, expected):
    assert parse_model_arg(text) == expected


@pytest.mark.parametrize("text", ["top_p", "=1", " =1"])
def test_a_model_arg_without_key_or_value_names_the_flag(text):
    with pytest.raises(UserError, match="--model-arg .*expected KEY=VALUE"):
        parse_model_arg(text)


def test_a_model_arg_given_twice_is_refused():
    with pytest.raises(UserError, match="--model-arg seed: given twice"):
        model_args_from(["seed=1", "seed=2"])


@pytest.mark.parametrize("key, flag", [
    ("model", "eegbench sets 'model'"), ("messages", "eegbench sets 'messages'"),
    ("temperature", "--temperature sets"), ("max_tokens", "--max-tokens sets"),
    ("max_completion_tokens", "--max-tokens sets"), ("stop", "--stop sets"),
    ("reasoning_effort", "--reasoning-effort sets"), ("reasoning", "--reasoning-effort sets"),
])
def test_a_model_arg_colliding_with_a_field_we_set_names_the_flags(key, flag):
    flags = flag_fields(temperature=0.0, stop=["x"], reasoning_effort="low")
    with pytest.raises(UserError, match=f"--model-arg {key}=.*{flag}"):
        check_model_args({key: 1}, flags)


def test_a_field_no_flag_sends_is_free_for_a_model_arg():
    flags = flag_fields(temperature=None, stop=None, reasoning_effort=None)
    check_model_args({"temperature": 1.0, "reasoning": {"max_tokens": 2000}, "top_p": 0.5}, flags)
    with pytest.raises(UserError, match="--model-arg model"):
        OpenAIModel("m", "http://127.0.0.1:9/v1", KEY, model_args={"model": "other"})


@pytest.mark.parametrize("url, effort, expected", [
    ("https://api.openai.com/v1", "high", {"reasoning_effort": "high"}),
    ("http://127.0.0.1:8000/v1", "none", {"reasoning_effort": "none"}),
    ("https://openrouter.ai/api/v1", "xhigh", {"reasoning": {"effort": "xhigh"}}),
    ("https://openrouter.ai/api/v1", "none", {"reasoning": {"effort": "none"}}),  # OpenRouter: reasoning off
    ("https://eu.openrouter.ai/api/v1", "low", {"reasoning": {"effort": "low"}}),
    ("https://notopenrouter.ai/v1", "low", {"reasoning_effort": "low"}),
    ("https://openrouter.ai/api/v1", None, {}),  # not given: nothing sent
])
def test_reasoning_effort_takes_the_providers_shape(url, effort, expected):
    assert reasoning_fields(effort, url) == expected


def test_the_body_carries_the_options_and_drops_what_is_none():
    settings = ModelSettings(temperature=None, max_tokens=64, max_tokens_field="max_completion_tokens",
                             reasoning_effort="low", model_args={"top_p": 0.5, "provider": {"sort": "price"}})
    with ScriptedServer([ok()]) as server:
        client = OpenAIModel("test-model", server.url, KEY, max_tokens=64, **settings_options(settings))
        client.session(None).complete(MESSAGES)
    body = server.requests[0]["body"]
    assert "temperature" not in body and "max_tokens" not in body and "stop" not in body
    assert body["max_completion_tokens"] == 64 and body["reasoning_effort"] == "low"
    assert body["top_p"] == 0.5 and body["provider"] == {"sort": "price"}
    assert client.describe()["model_args"] == {"top_p": 0.5, "provider": {"sort": "price"}}


def test_reasoning_tokens_are_read_when_the_endpoint_reports_them():
    detailed = completion_body("fine")
    detailed["usage"]["completion_tokens_details"] = {"reasoning_tokens": 5}
    with ScriptedServer([(200, detailed, {}, 0.0), ok()]) as server:
        client = model(server.url)
        first = client.session(None).complete(MESSAGES)
        second = client.session(None).complete(MESSAGES)
    assert (first.usage.completion_tokens, first.usage.reasoning_tokens) == (7, 5)
    assert second.usage.reasoning_tokens is None


@pytest.mark.parametrize("message, param, named, hint", [
    ("Unsupported parameter: 'temperature' is not supported with this model.", None,
     "temperature", "--temperature none"),
    ("Unsupported value: 'temperature' does not support 0 with this model.", "temperature",
     "temperature", "--temperature none"),
    ("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
     "max_tokens", "max_tokens", "--max-tokens-field max_completion_tokens"),
    ("Unrecognized request argument supplied: top_k", None, "top_k", "--model-arg top_k=..."),
    ("Invalid value for reasoning_effort: 'xhigh'", None, "reasoning_effort", "--reasoning-effort"),
])
def test_a_rejected_parameter_on_the_first_request_names_it_and_its_flag(message, param, named, hint):
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param}}
    with ScriptedServer([(400, body, {}, 0.0)]) as server:
        client = model(server.url, reasoning_effort="xhigh", model_args={"top_k": 5})
        with pytest.raises(ModelError) as info:
            client.session(None).complete(MESSAGES)
    said = str(info.value)
    assert info.value.kind == "setup" and len(server.requests) == 1
    assert f"rejects the parameter {named!r}" in said and hint in said and message[:40] in said


def test_a_first_request_rejection_naming_no_field_lists_the_flags():
    with ScriptedServer([error(400)]) as server:
        with pytest.raises(ModelError) as info:
            model(server.url).session(None).complete(MESSAGES)
    assert "rejected the run's first request" in str(info.value) and "--model-arg" in str(info.value)


def test_the_field_named_first_wins_and_max_tokens_is_not_found_in_max_completion_tokens():
    sent = ["max_tokens", "temperature"]
    assert rejected_parameter("use max_completion_tokens; temperature unsupported", None, sent) == "temperature"
    assert rejected_parameter("max_tokens is not supported. Use max_completion_tokens", None, sent) == "max_tokens"
    assert rejected_parameter("nothing here", "stop", sent) is None


def test_each_retry_is_noted_with_its_error_and_wait_and_retry_after_is_waited():
    answers = [error(429, {"Retry-After": "0.3"}), error(503), ok("done")]
    with ScriptedServer(answers) as server:
        client = model(server.url)
        began = time.perf_counter()
        completion = client.session(None).complete(MESSAGES)
        took = time.perf_counter() - began
    assert completion.text == "done" and len(completion.retries) == 2
    first, second = completion.retries
    assert "attempt 1 failed (HTTP 429" in first and "the endpoint's Retry-After 0.3 s" in first
    assert "waited 0.30 s" in first and "before attempt 2 of 4" in first
    assert "attempt 2 failed (HTTP 503" in second and "Retry-After" not in second
    assert took >= 0.3  # the wait the endpoint asked for was kept


def test_retry_after_ms_is_read_first():
    with ScriptedServer([error(429, {"retry-after-ms": "250", "Retry-After": "9"}), ok()]) as server:
        completion = model(server.url).session(None).complete(MESSAGES)
    assert "Retry-After 0.25 s" in completion.retries[0]


def test_threads_sharing_a_model_never_exceed_its_connections():
    with LimitedEndpoint(lambda body: "ok", cap=2, delay_s=0.2) as endpoint:
        client = model(endpoint.url, limiter=EndpointLimiter(2))
        workers = [threading.Thread(target=client.session(None).complete, args=(MESSAGES,)) for _ in range(6)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=30)
    assert endpoint.count == 6 and endpoint.violations == [] and endpoint.peak == 2
    assert client.limiter.in_flight() == 0  # type: ignore[attr-defined]


def test_failed_attempts_give_their_connection_back():
    faults = {1: Fault.server_error(), 2: Fault.malformed(), 3: Fault.rate_limited(0.05)}
    with LimitedEndpoint(lambda body: "ok", cap=1, faults=faults) as endpoint:
        client = model(endpoint.url, limiter=EndpointLimiter(1))
        completion = client.session(None).complete(MESSAGES)
    assert completion.text == "ok" and len(completion.retries) == 3
    assert client.limiter.in_flight() == 0  # type: ignore[attr-defined]


def test_close_ends_a_wait_for_a_connection():
    limiter = EndpointLimiter(1)
    assert limiter.try_acquire(1) == 0.0  # someone else holds the only connection
    client = model("http://127.0.0.1:9/v1", limiter=limiter)
    outcome = {}

    def call() -> None:
        try:
            client.session(None).complete(MESSAGES)
        except ModelError as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=call)
    worker.start()
    time.sleep(0.3)
    client.close()
    worker.join(timeout=5)
    assert not worker.is_alive() and "waiting for a connection" in str(outcome["error"])


def test_the_time_a_request_waited_for_a_connection_is_reported():
    limiter = EndpointLimiter(1)
    assert limiter.try_acquire(1) == 0.0  # another worker holds the only connection for 0.5 s
    with ScriptedServer([ok(), ok()]) as server:
        client = model(server.url, limiter=limiter)
        session = client.session(None)
        threading.Timer(0.5, limiter.release, args=(1,)).start()  # from just before the request
        waited = session.complete(MESSAGES)
        free = client.session(None).complete(MESSAGES)
    assert 0.4 <= waited.queued_s < 5 and free.queued_s < 0.4


def test_the_tpm_limiter_is_charged_the_real_usage():
    class Recording(EndpointLimiter):
        def __init__(self) -> None:
            super().__init__(4, tpm=10_000)
            self.asked: list[int] = []
            self.used: list[int] = []

        def try_acquire(self, tokens: int) -> float:
            self.asked.append(tokens)
            return super().try_acquire(tokens)

        def release(self, tokens_used: int) -> None:
            self.used.append(tokens_used)
            super().release(tokens_used)

    limiter = Recording()
    with ScriptedServer([ok()]) as server:
        model(server.url, max_tokens=100, limiter=limiter).session(None).complete([{"role": "user", "content": "x" * 400}])
    assert 200 <= limiter.asked[0] <= 230  # ~100 prompt tokens (4 characters each) + the reply limit
    assert limiter.used == [18]  # what the endpoint reported: 11 + 7


def test_retry_after_as_an_http_date_is_read():
    from email.utils import formatdate

    with ScriptedServer([error(503, {"Retry-After": formatdate(time.time() + 2, usegmt=True)}), ok()]) as server:
        client = model(server.url)
        client._sleep = lambda seconds: None  # the wait itself is not what this checks
        completion = client.session(None).complete(MESSAGES)
    waited = float(re.search(r"waited ([0-9.]+) s", completion.retries[0]).group(1))
    assert "Retry-After" in completion.retries[0] and 0.5 < waited <= 2.1  # HTTP dates have whole seconds


def test_a_retry_after_pauses_every_request_of_the_run():
    """One request's 429 with Retry-After 1.5 s holds back a request of another instance sent
    while it waits; without the pause that one would be answered at once."""
    with ScriptedServer([error(429, {"Retry-After": "1.5"}), ok(), ok()]) as server:
        client = model(server.url)
        told = threading.Thread(target=lambda: client.session(None).complete(MESSAGES))
        told.start()
        while not server.requests:
            time.sleep(0.01)
        time.sleep(0.2)  # the 429 has been answered and read
        other = client.session(None).complete(MESSAGES)
        told.join()
    assert other.queued_s >= 1.0 and not other.retries, other


def test_a_pause_is_never_shortened_and_then_ends():
    now = [100.0]
    limiter = EndpointLimiter(2, clock=lambda: now[0])
    limiter.pause(5)
    limiter.pause(1)
    assert limiter.try_acquire(1) == pytest.approx(5)
    now[0] += 5
    assert limiter.try_acquire(1) == 0.0


def test_the_deadline_cancels_a_call_in_flight():
    with ScriptedServer([ok(delay=5)]) as server:
        session = model(server.url, timeout_s=30).session(None)
        session.deadline = time.monotonic() + 1
        began = time.monotonic()
        with pytest.raises(ModelError) as ended:
            session.complete(MESSAGES)
    assert ended.value.kind == "deadline" and time.monotonic() - began < 3, ended.value


def test_the_deadline_ends_the_wait_for_the_endpoints_limits():
    limiter = EndpointLimiter(1)
    limiter.pause(60)  # e.g. another worker's Retry-After
    session = model("http://127.0.0.1:9/v1", limiter=limiter).session(None)
    session.deadline = time.monotonic() + 0.5
    began = time.monotonic()
    with pytest.raises(ModelError) as ended:
        session.complete(MESSAGES)
    assert ended.value.kind == "deadline" and "waiting for the endpoint" in str(ended.value)
    assert time.monotonic() - began < 2
