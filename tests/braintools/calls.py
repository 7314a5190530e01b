"""Calling tools in tests: a call that must succeed, one that must fail (its code), an output's id."""
from __future__ import annotations

from typing import Any

import braintools


def ok(name: str, **args: Any) -> dict[str, Any]:
    """The response of a call that must succeed."""
    response = braintools.call(name, args)
    assert "error" not in response, response
    return response


def code(name: str, **args: Any) -> str:
    """The error code of a call that must fail."""
    response = braintools.call(name, args)
    assert "error" in response, response
    return str(response["error"]["code"])


def first_id(response: dict[str, Any]) -> str:
    """The id of the response's first registered output."""
    return next(str(v["id"]) for v in response.values() if isinstance(v, dict) and "id" in v)


def value(entry: dict[str, Any]) -> Any:
    """The object registered under an output's id."""
    return braintools.STATE.entries[entry["id"]].value
