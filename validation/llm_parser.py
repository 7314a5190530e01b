"""The LLM Parser Agent: report + parser prompt -> {target_key: value or null}.

It extracts only what the report states (BrainBench's Parser Agent): it never sees the
ground truth, never computes or corrects, and answers null for anything not stated. The
caller makes the call at temperature 0 in JSON mode. A reply that is not a JSON object is
asked for once more; a second bad reply leaves every requested field null and the call is
recorded as `unparsed`. Caching is the caller's (runner/scoring/endpoints.py). The call's
record carries what it cost (CallUsage: role "parser", tokens, wall time with retries).
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import Field

from validation.context import CallUsage, Chat, UsageMeter
from validation.parser import MAX_REPORT_CHARS

PARSER_SYSTEM = (
    "You extract answers from an EEG analysis report into JSON. Follow the extraction "
    "instructions. Copy only what the report explicitly states; do not compute, infer, "
    "convert beyond what the instructions say, or correct anything. Use null for every key "
    "the report does not state. Reply with one JSON object holding exactly the requested "
    "keys and nothing else."
)
RETRY_NOTE = "Your reply was not a single JSON object. Reply again with only the JSON object of the requested keys."
PROMPT_VERSION = "1"  # bump when PARSER_SYSTEM or the message layout changes: it keys the cache


class ParserCall(CallUsage):
    """One extraction and its cost, as recorded in score.json's parser_calls."""

    model: str
    keys: list[str]
    report_sha256: str
    prompt_sha256: str
    status: Literal["parsed", "unparsed"]
    fields: dict[str, Any] = Field(default_factory=dict)
    replies: list[str] = Field(default_factory=list)
    error: str | None = None


def sha256_text(text: str) -> str:
    """The sha256 of a text (UTF-8), in hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def prompt_hash(parser_prompt: str, keys: list[str]) -> str:
    """A hash of everything that makes up the parser's prompt, for the parse cache."""
    return sha256_text(json.dumps([PROMPT_VERSION, PARSER_SYSTEM, parser_prompt, keys]))


def messages_for(report: str, parser_prompt: str, keys: list[str]) -> list[dict[str, Any]]:
    """The chat messages asking the parser model for the keys' values in a report."""
    user = (
        f"Extraction instructions:\n{parser_prompt or '(none)'}\n\n"
        f"Keys to return: {json.dumps(keys)}\n\n"
        f"Report:\n<<<\n{report[-MAX_REPORT_CHARS:]}\n>>>"
    )
    return [{"role": "system", "content": PARSER_SYSTEM}, {"role": "user", "content": user}]


def llm_parse(chat: Chat, model: str, report: str, parser_prompt: str, keys: list[str]) -> ParserCall:
    """Ask the endpoint for the keys; transport errors propagate (infrastructure)."""
    meter = UsageMeter(chat)
    call = _two_tries(meter, model, report, parser_prompt, keys)
    return call.model_copy(update=meter.usage("parser").model_dump())


def _two_tries(chat: UsageMeter, model: str, report: str, parser_prompt: str, keys: list[str]) -> ParserCall:
    base = dict(model=model, keys=keys, report_sha256=sha256_text(report),
                prompt_sha256=prompt_hash(parser_prompt, keys))
    messages = messages_for(report, parser_prompt, keys)
    replies = [chat(messages)]
    fields, error = read_fields(replies[0], keys)
    if fields is None:
        retry = messages + [{"role": "assistant", "content": replies[0]}, {"role": "user", "content": RETRY_NOTE}]
        replies.append(chat(retry))
        fields, error = read_fields(replies[1], keys)
    if fields is None:
        return ParserCall(**base, status="unparsed", fields={k: None for k in keys},
                          replies=replies, error=f"malformed twice: {error}")
    return ParserCall(**base, status="parsed", fields=fields, replies=replies)


def read_fields(reply: str, keys: list[str]) -> tuple[dict[str, Any] | None, str]:
    """The requested keys from a JSON-object reply (absent keys null; extra keys dropped)."""
    try:
        data = json.loads(reply)
    except (TypeError, ValueError):
        return None, "reply is not JSON"
    if not isinstance(data, dict):
        return None, f"reply is JSON {type(data).__name__}, not an object"
    return {key: _plain(data.get(key)) for key in keys}, ""


def _plain(value: Any) -> Any:
    """Strings like 'null' or 'N/A' that small models write for 'not stated' become None."""
    if isinstance(value, str) and value.strip().lower() in ("", "null", "none", "n/a", "not stated"):
        return None
    return value
