"""Deterministic report parser: free-form final report -> {target_key: value or None}.

This stands in for BrainBench's Parser Agent without a second model. It only extracts what
the report states explicitly; it never infers or corrects a value, and a key it cannot find
is None.

Sources, in order of authority:
1. A JSON object anywhere in the report (```json fenced or bare). When several parse, the
   last one that holds at least one target key wins: a final answer usually comes last, and
   an unrelated trailing object (`{"status": "done"}`) must not shadow it. A fenced block
   that is not JSON but a Python literal dict (what `print(dict)` shows) is accepted too.
2. `key: value` (or `key = value`) lines, for target keys the chosen object lacks. A key the
   object states as null stays null: the model said it has no value.

Keys match exactly first, then ignoring case, spaces, underscores and hyphens. Two different
values for one key in one source make the field ambiguous, hence None (never a pick).
parse_report never raises: any input, however malformed, yields a ParsedReport.
"""
from __future__ import annotations

import ast
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, Field

# Reports beyond this are parsed from their tail: the answer is at the end, and the bound
# keeps the JSON scan (worst case quadratic in the number of '{') fast on hostile input.
MAX_REPORT_CHARS = 200_000
# A failed decode costs time linear in its offset (json builds a line/column message), so
# hostile text full of '{"' would make the scan quadratic; the cap keeps it under a second.
MAX_FAILED_DECODES = 2_000
MAX_LITERAL_CHARS = 20_000  # ast.literal_eval input bound (fenced blocks, list values)
MAX_KEY_CHARS = 80

# Only '{' followed by a key or '}' can open a JSON object; the others are not even tried.
_OBJECT_START = re.compile(r'\{\s*["}]')
_LINE = re.compile(r"^(?P<key>[^:=\n]{1,%d}?)\s*[:=]\s*(?P<value>.*)$" % MAX_KEY_CHARS)
_BULLET = re.compile(r"^\s*(?:[-*+\u2022>]+|\d{1,3}[.)])\s+")
_KEY_DECOR = " \t*_`'\"#>"  # markdown bold/code, quotes, headings around a key
_VALUE_DECOR = "*`"  # markdown emphasis/code around a value


class ParsedReport(BaseModel):
    """What the parser extracted, and how."""

    fields: dict[str, Any] = Field(default_factory=dict)  # every target key, None if absent
    # rules: json | lines | none; with the LLM parser: llm | rules+llm | unparsed
    method: Literal["json", "lines", "none", "llm", "rules+llm", "unparsed"] = "none"
    notes: list[str] = Field(default_factory=list)
    calls: list[dict[str, Any]] = Field(default_factory=list)  # LLM parser calls, as recorded


def parse_report(report: Any, target_keys: Any) -> ParsedReport:
    """Extract the target keys from a report. Never raises."""
    try:
        return _parse(report, target_keys)
    except Exception as exc:  # last line of defence: a parser bug must not abort scoring
        keys = _clean_keys(target_keys) if isinstance(target_keys, (list, tuple)) else []
        return ParsedReport(
            fields={k: None for k in keys},
            method="none",
            notes=[f"parser error ({type(exc).__name__}); every field set to null"],
        )


def normalize_key(key: str) -> str:
    """Key as compared in the lenient pass: case, spaces, underscores, hyphens ignored."""
    return re.sub(r"[\s_\-]+", "", key).casefold()


def _parse(report: Any, target_keys: Any) -> ParsedReport:
    keys = _clean_keys(target_keys)
    notes: list[str] = []
    text = _as_text(report, notes)
    fields: dict[str, Any] = {k: None for k in keys}
    if not keys or not text.strip():
        if not text.strip():
            notes.append("empty report")
        return ParsedReport(fields=fields, method="none", notes=notes)

    obj = _last_object_with_keys(text, keys, notes)
    json_hits = _lookup_keys(obj, keys, notes) if obj is not None else {}
    fields.update(json_hits)

    missing = [k for k in keys if k not in json_hits]
    line_hits = _lookup_lines(text, missing, notes) if missing else {}
    fields.update(line_hits)
    if json_hits and line_hits:
        notes.append(f"from key: value lines (absent in the JSON object): {sorted(line_hits)}")

    method: Literal["json", "lines", "none"] = "none"
    if json_hits:
        method = "json"
    elif line_hits:
        method = "lines"
    absent = [k for k in keys if fields[k] is None]
    if absent:
        notes.append(f"null fields: {absent}")
    return ParsedReport(fields=fields, method=method, notes=notes)


def _clean_keys(target_keys: Any) -> list[str]:
    if not isinstance(target_keys, (list, tuple)):
        return []
    return list(dict.fromkeys(k for k in target_keys if isinstance(k, str) and k))


def _as_text(report: Any, notes: list[str]) -> str:
    if report is None:
        return ""
    if isinstance(report, bytes):
        report = report.decode("utf-8", errors="replace")
    if not isinstance(report, str):
        notes.append(f"report is {type(report).__name__}, not text")
        return ""
    text = report.replace("\x00", "")
    if len(text) > MAX_REPORT_CHARS:
        notes.append(f"report longer than {MAX_REPORT_CHARS} characters: parsed its tail")
        text = text[-MAX_REPORT_CHARS:]
    return text


# --- JSON objects ----------------------------------------------------------------------

def _last_object_with_keys(text: str, keys: list[str], notes: list[str]) -> dict[Any, Any] | None:
    objects = _json_objects(text, notes) + _fenced_literal_dicts(text)
    objects.sort(key=lambda pair: pair[0])  # by position in the report
    wanted = {normalize_key(k) for k in keys}
    chosen = None
    for _, obj in objects:
        if _holds_any_key(obj, wanted):
            chosen = obj
    if objects and chosen is None:
        notes.append(f"{len(objects)} JSON object(s) found, none holds a target key")
    elif len(objects) > 1:
        notes.append(f"{len(objects)} JSON objects found; the last with a target key was used")
    return chosen


def _json_objects(text: str, notes: list[str]) -> list[tuple[int, dict[Any, Any]]]:
    """Every top-level JSON object in the text, with its start offset.

    Decoding is attempted at each '{' not inside an object already decoded, so an invalid
    outer brace (`{ result: {"a": 1} }`) still lets a valid inner object through.
    """
    decoder = json.JSONDecoder()
    found: list[tuple[int, dict[Any, Any]]] = []
    resume, failures = 0, 0
    for start in _OBJECT_START.finditer(text):
        pos = start.start()
        if pos < resume:
            continue  # inside an object already decoded
        try:
            value, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            failures += 1
            if failures >= MAX_FAILED_DECODES:
                notes.append(f"JSON scan stopped after {failures} failed decodes at offset {pos}")
                break
            continue
        if isinstance(value, dict):
            found.append((pos, value))
            resume = end
    return found


def _fenced_literal_dicts(text: str) -> list[tuple[int, dict[Any, Any]]]:
    """Fenced blocks holding a Python dict literal (not JSON), e.g. pasted print() output."""
    found: list[tuple[int, dict[Any, Any]]] = []
    for start, body in _fenced_blocks(text):
        body = body.strip()
        if not body.startswith("{") or len(body) > MAX_LITERAL_CHARS or _is_json(body):
            continue
        value = _literal(body)
        if isinstance(value, dict):
            found.append((start, _jsonable(value)))
    return found


def _fenced_blocks(text: str) -> list[tuple[int, str]]:
    """(offset, body) of each ``` fenced block. Plain finds, not a regex: a regex with an
    info-string group backtracks quadratically on a long line of backticks."""
    blocks = []
    pos = text.find("```")
    while pos != -1:
        header_end = text.find("\n", pos + 3)
        if header_end == -1:
            break
        close = text.find("```", header_end + 1)
        if close == -1:
            break
        blocks.append((header_end + 1, text[header_end + 1 : close]))
        pos = text.find("```", close + 3)
    return blocks


def _is_json(body: str) -> bool:
    try:
        json.loads(body)
    except (ValueError, RecursionError):
        return False
    return True


def _literal(body: str) -> Any:
    try:
        return ast.literal_eval(body)
    except Exception:  # untrusted text: SyntaxError, ValueError, MemoryError, RecursionError...
        return None


def _jsonable(value: Any) -> Any:
    """Python literal -> JSON types (tuples/sets become lists, keys become strings)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_jsonable(v) for v in value), key=repr)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 13_000:
        return f"<integer of {value.bit_length()} bits>"  # beyond int-to-text limits
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)  # complex, bytes, Ellipsis: kept visible, never scored as a number


def _holds_any_key(obj: dict[Any, Any], wanted: set[str]) -> bool:
    stack = [obj]  # iterative: decoded objects may nest close to the recursion limit
    while stack:
        current = stack.pop()
        for key, value in current.items():
            if isinstance(key, str) and normalize_key(key) in wanted:
                return True
            if isinstance(value, dict):
                stack.append(value)
    return False


def _lookup_keys(obj: dict[Any, Any], keys: list[str], notes: list[str]) -> dict[str, Any]:
    """Target keys found in the object: top level first, then (if unique) nested."""
    hits: dict[str, Any] = {}
    for key in keys:
        found, value = _find_in_mapping(obj, key, notes)
        if not found:
            found, value = _find_nested(obj, key, notes)
        if found:
            hits[key] = value
    return hits


def _find_in_mapping(obj: dict[Any, Any], key: str, notes: list[str]) -> tuple[bool, Any]:
    if key in obj:
        return True, obj[key]
    norm = normalize_key(key)
    matches = [v for k, v in obj.items() if isinstance(k, str) and normalize_key(k) == norm]
    if not matches:
        return False, None
    if _all_equal(matches):
        return True, matches[0]
    notes.append(f"{key}: several keys match with different values; set to null")
    return True, None


def _find_nested(obj: dict[Any, Any], key: str, notes: list[str]) -> tuple[bool, Any]:
    """A key only present inside nested objects counts if exactly one value is found."""
    values: list[Any] = []
    stack = [v for v in obj.values() if isinstance(v, dict)]
    while stack:
        inner = stack.pop(0)
        found, value = _find_in_mapping(inner, key, notes)
        if found:
            values.append(value)
        stack.extend(v for v in inner.values() if isinstance(v, dict))
    if not values:
        return False, None
    if _all_equal(values):
        notes.append(f"{key}: taken from a nested object")
        return True, values[0]
    notes.append(f"{key}: found in several nested objects with different values; set to null")
    return True, None


def _all_equal(values: list[Any]) -> bool:
    try:
        first = json.dumps(values[0], sort_keys=True, default=str)
        return all(json.dumps(v, sort_keys=True, default=str) == first for v in values[1:])
    except (ValueError, RecursionError):
        return False  # undecidable: treated as a conflict, so the field stays null


# --- key: value lines ------------------------------------------------------------------

def _lookup_lines(text: str, keys: list[str], notes: list[str]) -> dict[str, Any]:
    """Target keys stated on `key: value` lines; a later line overrides an earlier one."""
    exact = set(keys)
    by_norm = {normalize_key(k): k for k in keys}
    hits: dict[str, Any] = {}
    for line in text.splitlines():
        pair = _split_line(line)
        if pair is None:
            continue
        raw_key, raw_value = pair
        key = raw_key if raw_key in exact else by_norm.get(normalize_key(raw_key))
        if key is None:
            continue
        if key in hits:
            notes.append(f"{key}: stated on several lines; the last one was used")
        hits[key] = _parse_value(raw_value)
    return hits


def _split_line(line: str) -> tuple[str, str] | None:
    line = _BULLET.sub("", line.strip(), count=1)
    match = _LINE.match(line)
    if match is None:
        return None
    key = match.group("key").strip(_KEY_DECOR)
    value = match.group("value").strip()
    # "**key:** value" leaves the closing markup at the start of the value.
    value = value.lstrip(_VALUE_DECOR).strip()
    if not key:
        return None
    return key, value


def _parse_value(raw: str) -> Any:
    """A line value as JSON if it parses (numbers, lists, true/null, quoted text), else text."""
    value = raw.strip().strip(_VALUE_DECOR).strip()
    value = value.rstrip(",;").strip()
    if not value:
        return None
    for candidate in dict.fromkeys((value, value.rstrip(".").strip())):
        parsed, ok = _json_value(candidate)
        if ok:
            return parsed
    if value[:1] in "[(" and len(value) <= MAX_LITERAL_CHARS:
        literal = _literal(value)
        if isinstance(literal, (list, tuple)):
            return _jsonable(literal)
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1]
    return value.rstrip(".").strip() or None


def _json_value(text: str) -> tuple[Any, bool]:
    try:
        return json.loads(text), True
    except (ValueError, RecursionError):
        return None, False
