"""How the Inspect model bridge turns Inspect's answers and failures into eegbench's."""
from __future__ import annotations

import anyio
import anyio.to_thread
import pytest
from inspect_ai.model import ModelOutput, ModelUsage
from inspect_ai.util import LimitExceededError

from eegbench import model as bridge
from runner.models.base import ModelError
from runner.paradigms.loop import Stop


def complete_with(monkeypatch, generate) -> object:
    """InspectSession.complete from a worker thread, its model call answered by `generate`."""
    monkeypatch.setattr(bridge, "_generate", generate)
    session = bridge.InspectModel("mockllm/model").session(None)  # type: ignore[arg-type]

    async def main():
        return await anyio.to_thread.run_sync(session.complete, [{"role": "user", "content": "hi"}])

    return anyio.run(main)


def test_a_reply_keeps_its_text_and_token_counts(monkeypatch):
    async def generate(messages, timeout):
        assert [m.role for m in messages] == ["user"] and timeout is None
        output = ModelOutput.from_content("m", "<solution>1</solution>")
        output.usage = ModelUsage(input_tokens=12, output_tokens=3, total_tokens=15, reasoning_tokens=1)
        return output

    completion = complete_with(monkeypatch, generate)
    assert completion.text == "<solution>1</solution>"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens, completion.usage.reasoning_tokens) \
        == (12, 3, 1)


@pytest.mark.parametrize(("kind", "status"), [("token", "token_limit"), ("message", "max_rounds"),
                                              ("time", "deadline"), ("working", "deadline"),
                                              ("operator", "infra_error")])
def test_an_inspect_limit_ends_the_instance_with_its_status(monkeypatch, kind, status):
    async def generate(messages, timeout):
        raise LimitExceededError(kind, value=10, limit=5, message=f"{kind} limit of 5")

    with pytest.raises(Stop) as stop:
        complete_with(monkeypatch, generate)
    assert stop.value.status == status and f"Inspect's {kind} limit" in str(stop.value)


@pytest.mark.parametrize(("raised", "kind"), [(TimeoutError(), "deadline"), (RuntimeError("HTTP 500"), "transport")])
def test_a_failed_call_is_a_model_error_of_its_kind(monkeypatch, raised, kind):
    async def generate(messages, timeout):
        raise raised

    with pytest.raises(ModelError) as error:
        complete_with(monkeypatch, generate)
    assert error.value.kind == kind


@pytest.mark.parametrize(("stop_reason", "kind"), [("model_length", "context_exceeded"), ("content_filter", "refused")])
def test_a_reply_cut_by_the_window_or_a_filter_ends_the_instance(monkeypatch, stop_reason, kind):
    async def generate(messages, timeout):
        return ModelOutput.from_content("m", "", stop_reason=stop_reason)

    with pytest.raises(ModelError) as error:
        complete_with(monkeypatch, generate)
    assert error.value.kind == kind
