"""The exception hierarchy of the harness.

Every error eegbench raises on purpose derives from `EegbenchError`, in one of two kinds:

- `UserError`: the input is wrong (a bad option, instance file, task spec, run name, missing
  data). The command stops with a message naming the thing at fault; nothing is retried.
- `InfrastructureError`: something the harness depends on failed (a sandbox, a model or
  scoring endpoint, Docker). An instance that meets one ends as `infra_error` and is retried
  on resume; it is never counted as the model's failure.

The `eegbench` command catches `EegbenchError` only: any other exception is a bug in eegbench
and shows its traceback. This module sits at the bottom of the import graph (it imports
nothing of the harness), so every package can use it. It also words field errors the one
way every message uses: `<file>: field 'a.b[2].c': expected a number, got 'abc'`.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


class EegbenchError(Exception):
    """Root of every error eegbench raises on purpose."""


class UserError(EegbenchError):
    """Wrong input: an option, file or setting; the message names the field at fault."""


class InfrastructureError(EegbenchError):
    """A dependency (sandbox, endpoint, Docker) failed; not the evaluated model's fault."""


# --- validation's own user errors (ValueError stays a base: older callers catch that) -------


class MetricConfigError(UserError, ValueError):
    """A metric's params are unusable (the instance is wrong, not the model)."""


class InstanceError(UserError, ValueError):
    """A malformed instance file; the message names the file and the field."""


class ScoringError(UserError, ValueError):
    """An instance whose metrics cannot be scored; the message names case and metric."""


# --- one wording for every field error -------------------------------------------------------
#
# Pydantic's ValidationError.errors() are dicts with `type`, `loc`, `msg`, `input`, `ctx`; they
# are read here as plain mappings so this module still imports nothing of pydantic.

# The branch names pydantic puts into `loc` for a union (`str | list[str]`): not field names.
_UNION_BRANCHES = {"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false",
                   "none": "null", "list[str]": "a list of strings", "dict[str,any]": "an object"}
_EXPECTED = {
    "string_type": "a string", "int_type": "an integer", "int_parsing": "an integer",
    "int_from_float": "an integer", "float_type": "a number", "float_parsing": "a number",
    "finite_number": "a finite number", "bool_type": "true or false", "bool_parsing": "true or false",
    "list_type": "a list", "dict_type": "an object", "model_type": "an object",
    "model_attributes_type": "an object", "string_too_short": "a non-empty string",
}
_BOUNDS = {"greater_than_equal": (">=", "ge"), "greater_than": (">", "gt"),
           "less_than_equal": ("<=", "le"), "less_than": ("<", "lt")}
MAX_LISTED = 5  # field problems named in one message; the rest are counted


def field_path(loc: Sequence[str | int]) -> str:
    """("eval_config", "metrics", 0, "weight") -> "eval_config.metrics[0].weight"."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not _is_branch(part):
            path += f".{part}" if path else part
    return path or "(top level)"


def describe_validation_errors(errors: Iterable[Mapping[str, Any]]) -> str:
    """Pydantic errors as "field 'a.b[2].c': expected a number, got 'abc'; ..." (a union's
    branches merged into one problem, at most MAX_LISTED problems named)."""
    problems = list(dict.fromkeys(_problems(list(errors))))
    listed = "; ".join(problems[:MAX_LISTED])
    more = len(problems) - MAX_LISTED
    return listed + (f"; and {more} more problem(s)" if more > 0 else "")


def short_value(value: Any, limit: int = 60) -> str:
    """repr(value), cut to `limit` characters (a whole instance can be the input)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_branch(part: str | int) -> bool:
    return isinstance(part, str) and (part in _UNION_BRANCHES or "[" in part)


def _problems(errors: list[Mapping[str, Any]]) -> list[str]:
    """One problem per error outside unions, one per union that no branch got into."""
    unions: dict[tuple[str | int, ...], list[Mapping[str, Any]]] = {}
    found: list[str] = []
    for error in errors:
        loc = tuple(error.get("loc", ()))
        branch = next((i for i, part in enumerate(loc) if _is_branch(part)), None)
        if branch is None:
            found.append(_one(error))
        else:
            unions.setdefault(loc[:branch], []).append(error)
    for parent, branches in unions.items():
        found += _union(parent, branches)
    return found


def _union(parent: tuple[str | int, ...], branches: list[Mapping[str, Any]]) -> list[str]:
    # A branch whose error lies deeper matched the value's outer type (a list with one bad
    # item): its errors are the real ones. Otherwise no branch fitted: list the alternatives.
    deeper = [e for e in branches if len(e["loc"]) > len(parent) + 1]
    if deeper:
        return [_one(e) for e in deeper]
    wanted = [_UNION_BRANCHES.get(str(e["loc"][len(parent)]), str(e["loc"][len(parent)])) for e in branches]
    got = short_value(branches[0].get("input"))
    return [f"field '{field_path(parent)}': expected {' or '.join(dict.fromkeys(wanted))}, got {got}"]


def _one(error: Mapping[str, Any]) -> str:
    return f"field '{field_path(error.get('loc', ()))}': {_wording(error)}"


def _wording(error: Mapping[str, Any]) -> str:
    kind, ctx = error.get("type", ""), error.get("ctx") or {}
    if kind == "missing":
        return "missing (required)"
    if kind == "json_invalid":
        return f"not valid JSON ({ctx.get('error')})"
    if kind == "value_error" and "error" in ctx:
        return str(ctx["error"])  # our own validator's message, which says what it got
    expected = _EXPECTED.get(kind)
    if kind == "literal_error":
        expected = f"one of {ctx.get('expected')}"
    elif kind in _BOUNDS:
        sign, key = _BOUNDS[kind]
        expected = f"a number {sign} {ctx.get(key)}"
    elif kind == "too_short":
        expected = f"at least {ctx.get('min_length')} item(s)"
    if expected is None:
        msg = str(error.get("msg", kind))
        return f"{msg[:1].lower()}{msg[1:]}, got {short_value(error.get('input'))}"
    return f"expected {expected}, got {short_value(error.get('input'))}"
