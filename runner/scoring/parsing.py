"""Report parsing by mode: `rules` (deterministic), `llm` (the Parser Agent), `auto` (rules
first, the LLM for the fields the rules could not fill).

An endpoint failure (transport, after the client's retries) raises ParserUnavailable: the
instance is then left unscored, never scored against fields nobody extracted.
"""
from __future__ import annotations

from runner.models.base import ModelError
from runner.scoring.endpoints import Endpoint
from runner.settings import ParserMode
from validation.errors import InfrastructureError
from validation.instance import Instance
from validation.llm_parser import llm_parse
from validation.parser import ParsedReport, parse_report


class ParserUnavailable(InfrastructureError, RuntimeError):
    """The LLM parser endpoint could not be reached."""


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
    try:
        call = llm_parse(endpoint.chat, endpoint.model, report, instance.eval_config.parser_prompt, keys)
    except ModelError as exc:
        raise ParserUnavailable(f"{instance.case_id}: parser endpoint {endpoint.model} failed: {exc}") from exc
    method = "llm" if call.status == "parsed" else "unparsed"
    return ParsedReport(fields=call.fields, method=method, calls=[call.model_dump(mode="json")],
                        notes=[call.error] if call.error else [])
