"""Report parsing by mode: `rules` (deterministic), `llm` (the Parser Agent), `auto` (rules
first, the LLM for the fields the rules could not fill).

An endpoint failure (transport, after the client's retries) raises ParserUnavailable: the
instance is then left unscored, never scored against fields nobody extracted. The failed
call is still recorded (`ParserUnavailable.call`): its wall time was spent.
"""
from __future__ import annotations

import time
from typing import Any

from runner.core.settings import ParserMode
from runner.models.base import ModelError
from runner.models.endpoint import Endpoint
from validation.context import USAGE_DECIMALS
from validation.errors import InfrastructureError
from validation.instance import Instance
from validation.llm_parser import llm_parse
from validation.parser import ParsedReport, parse_report


class ParserUnavailable(InfrastructureError, RuntimeError):
    """The LLM parser endpoint could not be reached; `call` is the failed call's record."""

    def __init__(self, message: str, call: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.call = call


def parse(mode: ParserMode, endpoint: Endpoint | None, instance: Instance, report: str) -> ParsedReport:
    """The report's fields by mode; ParserUnavailable when the LLM endpoint fails."""
    keys = instance.eval_config.target_keys()
    if mode == "rules" or endpoint is None or not keys:
        return parse_report(report, keys)
    if mode == "llm":
        return _llm(endpoint, instance, report, keys)
    rules = parse_report(report, keys)
    missing = [key for key in keys if rules.fields.get(key) is None]
    if not missing or not report.strip():
        return rules
    llm = _llm(endpoint, instance, report, missing)
    filled = {key: value for key, value in llm.fields.items() if value is not None}
    return ParsedReport(
        fields={**rules.fields, **filled},
        method="rules+llm" if filled else rules.method,
        notes=rules.notes + [f"llm parser asked for {missing}, filled {sorted(filled)}"],
        calls=llm.calls,
    )


def _llm(endpoint: Endpoint, instance: Instance, report: str, keys: list[str]) -> ParsedReport:
    if not report.strip():
        return ParsedReport(fields={k: None for k in keys}, method="none", notes=["empty report"])
    started = time.perf_counter()
    try:
        call = llm_parse(endpoint.ask, endpoint.model, report, instance.eval_config.parser_prompt, keys)
    except ModelError as exc:
        message = f"{instance.case_id}: parser endpoint {endpoint.model} failed: {exc}"
        # Tokens of a request that got through before the failure are lost with the
        # exception; the time is not, and it is what an outage costs.
        failed = {"role": "parser", "model": endpoint.model, "keys": keys, "status": "failed", "error": str(exc),
                  "prompt_tokens": None, "completion_tokens": None,
                  "latency_s": round(time.perf_counter() - started, USAGE_DECIMALS)}
        raise ParserUnavailable(message, failed) from exc
    method = "llm" if call.status == "parsed" else "unparsed"
    return ParsedReport(fields=call.fields, method=method, calls=[call.model_dump(mode="json")],
                        notes=[call.error] if call.error else [])
