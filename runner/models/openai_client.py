"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, llama.cpp, Ollama, OpenRouter...).

The SDK's own retrying is switched off so the policy is ours and visible (BrainBench's
failure policy, appendix D: score what the model caused, retry what the infrastructure did):
- timeouts, connection errors, 408, 409, 429, 5xx and a malformed body (a 200 whose JSON is
  truncated or has no choices) are transport trouble: retried with exponential backoff and
  full jitter (honouring Retry-After), then ModelError(transport): infra_error, retried on resume.
- 401, 403 and 404 (wrong key, base URL or model name), and any 4xx on the run's first
  request (a parameter the endpoint rejects), are setup errors: the run stops at once, the
  message naming the rejected field and the flag that changes it (runner/models/request_body.py).
- a 400/413 saying the context is exceeded is the model's own growing transcript
  (context_exceeded); a refusal or content-filter stop is the model's (refused); any other
  4xx once the endpoint has answered rejects this conversation, which the model's turns made
  (rejected). All three end the instance with that status and are scored as produced.

Every retried attempt is reported in Completion.retries (the transcript's model_retry events)
with its error and the wait before the next attempt; a Retry-After (or retry-after-ms) header
sets the least wait, even past the backoff cap.

Each attempt holds one slot of the endpoint limiter (runner/models/ratelimit.py) for the HTTP
request only: waiting for a slot or in a backoff holds none.
The API key is handed to the SDK and never stored, logged or recorded.
"""
from __future__ import annotations

import email.utils
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessage

from runner.core.paths import Environment
from runner.core.settings import ModelSettings
from runner.core.transcript import Usage
from runner.models import request_body
from runner.models.base import (
    Completion,
    Message,
    Model,
    ModelError,
    ModelFailure,
    ModelSession,
    ToolCall,
    prompt_tokens,
)
from runner.models.credentials import (
    API_KEY_VARS,
    BASE_URL_VARS,
    check_base_url,
    endpoint_from_env,
    first_key,
    key_sources,
    public_url,
)
from runner.models.endpoint import Endpoint, EndpointError
from runner.models.ratelimit import EndpointLimiter, Limiter
from validation.context import ChatReply
from validation.instance import Instance

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 409, 429})
SETUP_STATUS = frozenset({401, 403, 404})
# How endpoints say a prompt is too long (OpenAI, vLLM, llama.cpp, Anthropic-compatible proxies).
CONTEXT_PATTERN = re.compile(
    r"context[_ ]length|context (size|window)|maximum context|too many tokens|prompt is too long|"
    r"exceeds? the (available )?context|input is too long", re.IGNORECASE)
REFUSAL_PATTERN = re.compile(r"content[_ ](filter|policy|management)|safety system|flagged", re.IGNORECASE)
RETRY_AFTER_MAX_S = 600.0  # a longer Retry-After is a broken header, not a plan
LEASE_MARGIN_S = 30.0  # beyond the request timeout, before an unreleased connection is taken back
DEFAULT_MAX_TOKENS = 2048  # when --max-tokens is not given
JSON_MODE = {"type": "json_object"}  # what parsers and judges ask for


def limiter_options(settings: ModelSettings) -> dict[str, Any]:
    """EndpointLimiter's keyword arguments from a run's settings (for one in this process or
    one shared actor); a connection's lease outlasts any request (the client gives up on one
    after timeout_s)."""
    return {"max_connections": settings.max_connections, "rpm": settings.rpm, "tpm": settings.tpm,
            "lease_s": settings.timeout_s + LEASE_MARGIN_S}


def settings_options(settings: ModelSettings) -> dict[str, Any]:
    """OpenAIModel's keyword arguments from a run's model settings (all but max_tokens,
    whose default depends on the model kind), with a limiter of the settings' limits."""
    return {
        "temperature": settings.temperature,
        "max_tokens_field": settings.max_tokens_field,
        "stop": list(settings.stop) if settings.stop else None,
        "reasoning_effort": settings.reasoning_effort,
        "model_args": settings.model_args,
        "timeout_s": settings.timeout_s,
        "max_retries": settings.max_retries,
        "limiter": EndpointLimiter(**limiter_options(settings)),
    }


class OpenAIModel(Model):
    """A model behind an OpenAI-compatible endpoint, with our own retry policy (module doc)."""

    def __init__(
        self,
        name: str,
        base_url: str,
        api_key: str,
        *,
        temperature: float | None = 0.0,
        max_tokens: int = 2048,
        max_tokens_field: str = "max_tokens",
        stop: list[str] | None = None,
        reasoning_effort: str | None = None,
        model_args: Mapping[str, Any] | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 5,
        backoff_base_s: float = 1.0,
        backoff_cap_s: float = 60.0,
        use_env_proxy: bool = True,
        limiter: Limiter | None = None,
    ) -> None:
        """`use_env_proxy=False` ignores HTTP(S)_PROXY: a server on 127.0.0.1 must not be
        reached through a proxy, and neither httpx nor urllib exempts loopback by itself.
        `temperature=None` sends none; `limiter` (default: 8 connections, no rpm or tpm) may be
        replaced after construction, e.g. by a proxy to one shared by several processes."""
        self.name = f"openai:{name}"
        self.model_id = name
        self.base_url = base_url
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_tokens_field = max_tokens_field
        self.stop = list(stop) if stop else None
        self.reasoning_effort = reasoning_effort
        self.model_args = dict(model_args or {})
        request_body.check_model_args(self.model_args, request_body.flag_fields(
            temperature=temperature, stop=self.stop, reasoning_effort=reasoning_effort))
        self.limiter: Limiter = limiter if limiter is not None else EndpointLimiter()
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_base_s = backoff_base_s
        self.backoff_cap_s = backoff_cap_s
        self._closing = threading.Event()
        # Backoff waits on the event, so close() cuts a pending wait short. Tests replace it.
        self._sleep: Callable[[float], object] = self._closing.wait
        self._random = random.Random()
        self.answered = False  # set by the first successful reply: a 4xx before it is a setup error
        # Native function calling: None until an endpoint answered a request with `tools`;
        # False once it rejected one, after which the tools paradigm talks JSON text.
        self.native_tools: bool | None = None
        http_client = None if use_env_proxy else openai.DefaultHttpxClient(trust_env=False)
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key,
            max_retries=0,
            timeout=timeout_s,
            http_client=http_client,
        )

    def session(self, instance: Instance) -> ModelSession:
        """A stateless session: every turn sends the whole conversation to the endpoint."""
        return _HttpSession(self)

    def describe(self) -> dict[str, Any]:
        """Endpoint and generation settings; the base URL without credentials, never the key."""
        return {
            "name": self.name,
            "model": self.model_id,
            "base_url": public_url(self.base_url),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "max_tokens_field": self.max_tokens_field,
            "stop": self.stop,
            "reasoning_effort": self.reasoning_effort,
            "model_args": self.model_args,
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "backoff_base_s": self.backoff_base_s,
            "backoff_cap_s": self.backoff_cap_s,
        }

    def close(self) -> None:
        """Close the HTTP client and cut short any backoff wait in progress."""
        self._closing.set()  # turns waiting in a backoff give up instead of retrying
        self._client.close()

    def complete(self, messages: list[Message], tools: list[dict[str, Any]] | None = None,
                 deadline: float | None = None, **extra: Any) -> Completion:
        """One reply, retrying transport failures; the latency is the successful attempt's.
        `deadline` (time.monotonic()) bounds the whole call, waits and retries included:
        ModelError(kind="deadline") once it passes. `extra` goes into the request as is (e.g.
        response_format for JSON mode)."""
        attempt = 0
        retries: list[str] = []
        queued = 0.0
        estimate = self.estimate_tokens(messages, tools)
        while True:
            queued += self._acquire(estimate, deadline)
            used = estimate  # what the limiter is charged unless the endpoint reports usage
            start = time.perf_counter()
            try:
                response = self._client.chat.completions.create(
                    **self._request(messages, tools), timeout=self._request_timeout(deadline), **extra)
                completion = _completion(response, time.perf_counter() - start)
                used = completion.usage.total() or estimate
                completion.retries = retries
                completion.queued_s = round(queued, 3)
                self.answered = True
                _raise_refusal(self.name, response)
                return completion
            except (openai.APIError, _EmptyResponse, ValueError) as exc:  # ValueError: a body that is not JSON
                _check_deadline(self.name, deadline, f"while the request ran ({_describe_error(exc)})")
                retry_after = self._check_retryable(exc, attempt)
                what = _describe_error(exc)
            finally:
                self.limiter.release(used)
            if retry_after is not None:  # the endpoint's budget is the run's: every request waits it out
                self.limiter.pause(min(retry_after, RETRY_AFTER_MAX_S))
            delay = self.backoff_delay(attempt, retry_after)
            if deadline is not None and time.monotonic() + delay >= deadline:
                self._sleep(max(0.0, deadline - time.monotonic()))
                _check_deadline(self.name, deadline, f"before the retry of {what}")
            retries.append(_retry_note(attempt, self.max_retries, what, delay, retry_after))
            log.warning(
                "%s: attempt %d/%d failed (%s); retrying in %.1f s",
                self.name, attempt + 1, self.max_retries + 1, what, delay,
            )
            self._sleep(delay)
            attempt += 1
            if self._closing.is_set():
                raise ModelError(
                    f"{self.name}: model closed while retrying ({what})", infrastructure=True
                )

    def estimate_tokens(self, messages: list[Message], tools: list[dict[str, Any]] | None = None) -> int:
        """What a request may cost before its reply says: ~4 characters a token of what is
        sent, plus the whole reply limit (the limiter corrects it with the real usage)."""
        return prompt_tokens(messages, tools) + self.max_tokens

    def _acquire(self, tokens: int, deadline: float | None = None) -> float:
        """Wait for the limiter's grant; the seconds waited. close() ends the wait, and so
        does the deadline (ModelError kind "deadline")."""
        start = time.monotonic()
        while (wait := self.limiter.try_acquire(tokens)) > 0:
            if deadline is not None:
                wait = min(wait, max(0.0, deadline - time.monotonic()))
            if self._closing.wait(wait):
                raise ModelError(f"{self.name}: model closed while waiting for a connection",
                                 infrastructure=True)
            _check_deadline(self.name, deadline, "while waiting for the endpoint's limits "
                                                 "(--max-connections, --rpm, --tpm, a Retry-After)")
        return time.monotonic() - start

    def _request_timeout(self, deadline: float | None) -> float:
        """The request's timeout: the configured one, cut to what is left before the deadline."""
        if deadline is None:
            return self.timeout_s
        return max(0.01, min(self.timeout_s, deadline - time.monotonic()))

    def backoff_delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Full jitter: uniform in [0, min(cap, base * 2**attempt)], and at least Retry-After
        (up to RETRY_AFTER_MAX_S): retrying sooner than the endpoint asked wastes an attempt."""
        delay = self._random.uniform(0.0, min(self.backoff_cap_s, self.backoff_base_s * 2**attempt))
        if retry_after is not None:
            delay = max(delay, min(retry_after, RETRY_AFTER_MAX_S))
        return delay

    def complete_with_tools(self, messages: list[Message], tools: list[dict[str, Any]],
                            deadline: float | None = None) -> Completion:
        """Native function calling while the endpoint accepts it. The first request it
        rejects (a 4xx such as "tools not supported") switches this model to the JSON text
        format for good; the tools paradigm's prompt describes both."""
        if self.native_tools is False or not tools:
            return self.complete(messages, deadline=deadline)
        try:
            completion = self.complete(messages, tools, deadline=deadline)
        except ModelError as exc:
            if exc.infrastructure or exc.kind == "deadline" or self.native_tools or _has_native_turns(messages):
                raise
            log.warning("%s: endpoint rejected native tool calling (%s); using JSON text actions", self.name, exc)
            self.native_tools = False
            return self.complete(messages, deadline=deadline)
        self.native_tools = True
        return completion

    def _request(self, messages: list[Message], tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model_id, "messages": messages}
        if tools:
            request["tools"] = tools
        # Fields the SDK has no parameter for (or, for max_completion_tokens and reasoning,
        # not in every SDK version) travel in extra_body, merged into the JSON as they are.
        request["extra_body"] = self._body_fields()
        return request

    def _body_fields(self) -> dict[str, Any]:
        """Everything sent besides model, messages and tools."""
        body: dict[str, Any] = {self.max_tokens_field: self.max_tokens}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.stop:
            body["stop"] = self.stop
        body.update(request_body.reasoning_fields(self.reasoning_effort, self.base_url))
        body.update(self.model_args)
        return body

    def _check_retryable(self, exc: Exception, attempt: int) -> float | None:
        """Raise the final ModelError unless `exc` may be retried; return any Retry-After."""
        status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
        what = _describe_error(exc)
        if status in SETUP_STATUS:
            raise ModelError(
                f"{self.name}: endpoint refused the request ({what}); check the base URL, "
                "the API key and the model name",
                infrastructure=False, kind="setup",
            ) from exc
        if status is not None and status < 500 and status not in RETRY_STATUS:
            kind = self._rejection_kind(what)
            message = self._setup_message(exc, what) if kind == "setup" else f"request rejected ({what})"
            raise ModelError(f"{self.name}: {message}", infrastructure=False, kind=kind) from exc
        if attempt >= self.max_retries or self._closing.is_set():
            raise ModelError(
                f"{self.name}: giving up after {attempt + 1} attempts ({what})", infrastructure=True
            ) from exc
        return _retry_after(exc)

    def _setup_message(self, exc: Exception, what: str) -> str:
        """The first request was rejected: name the field at fault and the flag to change."""
        param = getattr(exc, "param", None)
        return request_body.rejected_parameter_message(
            what, param if isinstance(param, str) else None, max_tokens_field=self.max_tokens_field,
            model_args=self.model_args, sent=list(self._body_fields()))

    def _rejection_kind(self, what: str) -> ModelFailure:
        """Whose failure a 4xx is: the transcript's length, a refusal, the setup, or the conversation."""
        if CONTEXT_PATTERN.search(what):
            return "context_exceeded"
        if REFUSAL_PATTERN.search(what):
            return "refused"
        return "rejected" if self.answered else "setup"


def _raise_refusal(name: str, response: ChatCompletion) -> None:
    """A reply the endpoint's refusal or content filter ended is the model's refusal."""
    choice = response.choices[0]
    refusal = getattr(choice.message, "refusal", None)
    if choice.finish_reason == "content_filter" or refusal:
        detail = f": {str(refusal)[:200]}" if refusal else ""
        raise ModelError(f"{name}: the reply was refused (finish_reason {choice.finish_reason}){detail}",
                         infrastructure=False, kind="refused")


class _HttpSession(ModelSession):
    """Stateless: the controller sends the whole conversation each turn."""

    def __init__(self, model: OpenAIModel) -> None:
        self._model = model

    def complete(self, messages: list[Message]) -> Completion:
        return self._model.complete(messages, deadline=self.deadline)

    def complete_with_tools(self, messages: list[Message], tools: list[dict[str, Any]]) -> Completion:
        return self._model.complete_with_tools(messages, tools, deadline=self.deadline)


def _check_deadline(name: str, deadline: float | None, when: str) -> None:
    if deadline is not None and time.monotonic() >= deadline:
        raise ModelError(f"{name}: the instance deadline passed {when}", infrastructure=False, kind="deadline")


class _EmptyResponse(Exception):
    """A 200 without choices: a broken proxy or server, treated like a 5xx."""


def _completion(response: ChatCompletion, latency_s: float) -> Completion:
    if not getattr(response, "choices", None):
        raise _EmptyResponse("response has no choices")
    message = response.choices[0].message
    text = message.content or ""
    usage = response.usage
    details = getattr(usage, "completion_tokens_details", None)
    return Completion(
        text=text,
        usage=Usage(
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            reasoning_tokens=getattr(details, "reasoning_tokens", None),
        ),
        latency_s=latency_s,
        tool_calls=_tool_calls(message),
    )


def _tool_calls(message: ChatCompletionMessage) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for i, call in enumerate(getattr(message, "tool_calls", None) or []):
        function = getattr(call, "function", None)
        if function is None:
            continue
        calls.append(ToolCall(
            id=getattr(call, "id", None) or f"call_{i}",
            name=getattr(function, "name", "") or "",
            arguments=getattr(function, "arguments", "") or "",
        ))
    return calls


def _has_native_turns(messages: list[Message]) -> bool:
    """A conversation that already holds native tool turns cannot fall back to text."""
    return any(m.get("role") == "tool" or m.get("tool_calls") for m in messages)


def _describe_error(exc: Exception) -> str:
    status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
    name = type(exc).__name__
    message = str(exc).replace("\n", " ")[:300]
    return f"HTTP {status} {name}: {message}" if status else f"{name}: {message}"


def _retry_note(attempt: int, max_retries: int, what: str, delay: float, retry_after: float | None) -> str:
    """One retried attempt as the transcript's model_retry event says it."""
    asked = f", the endpoint's Retry-After {retry_after:g} s" if retry_after is not None else ""
    return (f"attempt {attempt + 1} failed ({what}); waited {delay:.2f} s{asked} "
            f"before attempt {attempt + 2} of {max_retries + 1}")


def _retry_after(exc: Exception) -> float | None:
    """Seconds the endpoint asked to wait: retry-after-ms (OpenAI), else Retry-After in
    seconds or as an HTTP date; None when absent or unreadable."""
    response = getattr(exc, "response", None)
    if response is None:
        return None
    headers = response.headers
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
        try:
            return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            continue  # neither a number nor a date: our own backoff decides
    return None


def build(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    """MODEL=openai:NAME: the endpoint at EEGBENCH_BASE_URL (or OPENAI_BASE_URL) with its key."""
    base_url, api_key = endpoint_from_env(env.variables)
    return OpenAIModel(str(argument), base_url, api_key, max_tokens=settings.max_tokens or DEFAULT_MAX_TOKENS,
                       **settings_options(settings))


def endpoint(role: str, argument: str | None, env: Environment, cache_dir: Path | None) -> Endpoint:
    """A parser or judge at EEGBENCH_<ROLE>_BASE_URL and _API_KEY, else the evaluated model's."""
    name = str(argument)
    prefix = f"EEGBENCH_{role.upper()}_"
    variables = (prefix + "BASE_URL", *BASE_URL_VARS)
    variable = next((v for v in variables if env.get(v)), None)
    base_url = check_base_url(variable, env.get(variable) or "") if variable else None
    api_key = first_key(env.variables, (prefix + "API_KEY", *API_KEY_VARS))
    if not base_url or not api_key:
        raise EndpointError(f"{role} model {name!r}: set {prefix}BASE_URL and {key_sources((prefix + 'API_KEY',))} "
                            "(or the evaluated model's EEGBENCH_BASE_URL and EEGBENCH_API_KEY)")
    client = OpenAIModel(name, base_url, api_key, temperature=0.0, max_tokens=1024)
    return Endpoint(role, f"openai:{name}", json_sender(client), {"base_url": public_url(base_url)},
                    cache_dir=cache_dir, owner=client)


def json_sender(client: OpenAIModel) -> Callable[[list[dict[str, Any]]], ChatReply]:
    """A chat function asking an OpenAI-compatible client for JSON replies, with their usage."""
    def send(messages: list[dict[str, Any]]) -> ChatReply:
        completion = client.complete(messages, response_format=JSON_MODE)
        return ChatReply(text=completion.text, prompt_tokens=completion.usage.prompt_tokens,
                         completion_tokens=completion.usage.completion_tokens)
    return send
