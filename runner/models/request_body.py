"""What a chat request carries besides the conversation, and which flag changes each field.

- generation fields: temperature (None: not sent), the reply limit under the name the
  endpoint wants (--max-tokens-field), stop sequences;
- the reasoning effort in the provider's own shape (--reasoning-effort);
- provider options given as --model-arg KEY=VALUE, sent as they are.

When an endpoint rejects a field on the run's first request, `rejected_parameter_message`
names the field and the flag that drops or changes it, so the run stops with one actionable
message instead of a bare HTTP 400. Nothing here imports the OpenAI SDK: the command line
parses and checks the options before any model is built.
"""
from __future__ import annotations

import json
import re
from typing import Any, get_args
from urllib.parse import urlsplit

from runner.core.settings import MaxTokensField, ReasoningEffort
from validation.errors import UserError

REASONING_EFFORTS: tuple[str, ...] = get_args(ReasoningEffort)
MAX_TOKENS_FIELDS: tuple[str, ...] = get_args(MaxTokensField)
# Fields the harness owns whatever the flags say: a --model-arg may never replace them.
HARNESS_FIELDS = ("model", "messages", "tools", "stream")
OPENROUTER_HOST = "openrouter.ai"
# A key as a whole word (so max_tokens is not found inside max_completion_tokens).
_WORD = r"(?<![A-Za-z0-9_]){}(?![A-Za-z0-9_])"


def parse_model_arg(text: str) -> tuple[str, Any]:
    """KEY=VALUE with VALUE read as JSON (numbers, booleans, objects), else as plain text."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise UserError(f"--model-arg {text!r}: expected KEY=VALUE, e.g. --model-arg top_p=0.9")
    try:
        return key, json.loads(raw)
    except json.JSONDecodeError:
        return key, raw


def model_args_from(texts: list[str] | None) -> dict[str, Any]:
    """The --model-arg options as a dict; a repeated key is an error (which one was meant?)."""
    args: dict[str, Any] = {}
    for text in texts or []:
        key, value = parse_model_arg(text)
        if key in args:
            raise UserError(f"--model-arg {key}: given twice")
        args[key] = value
    return args


def flag_fields(*, temperature: float | None, stop: list[str] | tuple[str, ...] | None,
                reasoning_effort: str | None) -> dict[str, str]:
    """Body field -> the flag that sets it, for the fields these settings send."""
    fields = {name: "--max-tokens" for name in MAX_TOKENS_FIELDS}
    if temperature is not None:
        fields["temperature"] = "--temperature"
    if stop:
        fields["stop"] = "--stop"
    if reasoning_effort is not None:
        fields["reasoning_effort"] = fields["reasoning"] = "--reasoning-effort"
    return fields


def check_model_args(model_args: dict[str, Any], flags: dict[str, str]) -> None:
    """UserError naming --model-arg when a key would replace a field the harness or a flag sets."""
    for key in model_args:
        if key in HARNESS_FIELDS:
            raise UserError(f"--model-arg {key}=...: eegbench sets {key!r} itself; it cannot be given")
        if key in flags:
            raise UserError(f"--model-arg {key}=...: {flags[key]} sets {key!r}; give it there, not both")


def is_openrouter(base_url: str) -> bool:
    """The base URL is OpenRouter's (its reasoning control has its own shape)."""
    host = urlsplit(base_url).hostname or ""
    return host == OPENROUTER_HOST or host.endswith("." + OPENROUTER_HOST)


def reasoning_fields(effort: str | None, base_url: str) -> dict[str, Any]:
    """The effort in the endpoint's shape: OpenRouter's `reasoning` object (whose "none"
    turns reasoning off), else the OpenAI-compatible `reasoning_effort`. None: nothing sent,
    so the endpoint's own default applies."""
    if effort is None:
        return {}
    if is_openrouter(base_url):
        return {"reasoning": {"effort": effort}}
    return {"reasoning_effort": effort}


def _flag_hints(max_tokens_field: str) -> dict[str, str]:
    other = next(name for name in MAX_TOKENS_FIELDS if name != max_tokens_field)
    return {
        "temperature": "`--temperature none` stops sending it (or give a value the model accepts)",
        max_tokens_field: f"`--max-tokens-field {other}` sends the reply limit under that name instead",
        "stop": "leave out --stop (this endpoint takes no stop sequences)",
        "reasoning_effort": "leave out --reasoning-effort (or give a level the model accepts)",
        "reasoning": "leave out --reasoning-effort (or give a level the model accepts)",
    }


def rejected_parameter(error: str, param: str | None, sent: list[str]) -> str | None:
    """The field of `sent` an endpoint's error names: its `param`, else the one the
    message mentions first (as a whole word), else None."""
    if param in sent:
        return param
    found = [(match.start(), key) for key in sent
             if (match := re.search(_WORD.format(re.escape(key)), error)) is not None]
    return min(found)[1] if found else None


def rejected_parameter_message(error: str, param: str | None, *, max_tokens_field: str,
                               model_args: dict[str, Any], sent: list[str]) -> str:
    """What to change when the run's first request was rejected: the field and its flag."""
    hints = _flag_hints(max_tokens_field)
    hints.update({key: f"leave out or change `--model-arg {key}=...`" for key in model_args})
    key = rejected_parameter(error, param, [k for k in sent if k in hints])
    if key is None:
        return (f"the endpoint rejected the run's first request ({error}); if it objects to a parameter, "
                "--temperature none, --max-tokens-field, --stop, --reasoning-effort and --model-arg "
                "change what is sent")
    return f"the endpoint rejects the parameter {key!r} ({error}); {hints[key]}"
