"""The evaluated model, reached through Inspect's model API.

eegbench's loops call a `ModelSession` from a worker thread; `InspectSession.complete` hands
the conversation back to the event loop the sample runs on and awaits Inspect's `get_model()`
there, so the sample's model (any Inspect provider), its generate config, `--max-connections`,
retries, token accounting and transcript all apply. How a failed call ends the instance:

- an Inspect limit (`--token-limit`, `--message-limit`, `--time-limit`, ...) ends it with the
  eegbench status that limit stands for (token_limit, max_rounds, deadline), scored as produced;
- the instance deadline passing while the call waits ends it as `deadline`;
- the model's window exceeded -> context_exceeded; a content filter -> refused;
- any other failure after Inspect's own retries is the endpoint's: infra_error, which makes
  the sample an error (Inspect's --retry-on-error and `inspect eval-retry` run it again).
"""
from __future__ import annotations

import concurrent.futures
import time
from typing import Any

import anyio
import anyio.from_thread
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.util import LimitExceededError

from runner.core.transcript import InstanceStatus, Usage
from runner.models.base import Completion, Message, Model, ModelError, ModelSession
from runner.paradigms.loop import Stop
from runner.report.inspect_log import chat_messages
from validation.instance import Instance

# Inspect's limit types as the eegbench status that ends an instance for the same reason.
LIMIT_STATUS: dict[str, InstanceStatus] = {
    "token": "token_limit", "cost": "token_limit", "message": "max_rounds", "turn": "max_rounds",
    "time": "deadline", "working": "deadline",
}


class InspectModel(Model):
    """The sample's Inspect model; `name` is recorded as `inspect:<provider/model>`."""

    def __init__(self, name: str) -> None:
        self.name = f"inspect:{name}"

    def session(self, instance: Instance) -> ModelSession:
        """A conversation through Inspect for one instance."""
        return InspectSession(self.name)


class InspectSession(ModelSession):
    """Calls Inspect's model on the sample's event loop, from the instance's worker thread."""

    def __init__(self, name: str) -> None:
        self.name = name

    def complete(self, messages: list[Message]) -> Completion:
        """The model's reply to `messages` (the instance's whole history)."""
        started = time.monotonic()
        timeout = None if self.deadline is None else max(self.deadline - started, 0.0)
        try:
            output = anyio.from_thread.run(_generate, chat_messages(messages, self.name), timeout)
        except LimitExceededError as exc:
            status = LIMIT_STATUS.get(exc.type, "infra_error")
            raise Stop(status, f"Inspect's {exc.type} limit: {exc.message or exc}") from exc
        except TimeoutError as exc:
            raise ModelError("the instance deadline passed while Inspect's model call ran",
                             infrastructure=False, kind="deadline") from exc
        except concurrent.futures.CancelledError as exc:
            raise ModelError("the Inspect sample was cancelled", infrastructure=True) from exc
        except Exception as exc:  # noqa: BLE001 - whatever the provider raised, after Inspect's retries
            raise ModelError(f"Inspect model call failed: {type(exc).__name__}: {exc}", infrastructure=True) from exc
        return _completion(output, time.monotonic() - started)


async def _generate(messages: list[Any], timeout: float | None) -> ModelOutput:
    with anyio.fail_after(timeout):
        return await get_model().generate(messages)


def _completion(output: ModelOutput, latency_s: float) -> Completion:
    if output.stop_reason == "model_length":
        raise ModelError("the conversation exceeds the model's context window", infrastructure=False,
                         kind="context_exceeded")
    if output.stop_reason == "content_filter":
        raise ModelError("the provider's content filter stopped the reply", infrastructure=False, kind="refused")
    usage = output.usage
    tokens = Usage() if usage is None else Usage(prompt_tokens=usage.input_tokens,
                                                 completion_tokens=usage.output_tokens,
                                                 reasoning_tokens=usage.reasoning_tokens)
    return Completion(text=output.completion, usage=tokens, latency_s=round(latency_s, 3))
