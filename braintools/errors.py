"""The one error every toolset call can end with: a code the agent can act on and the argument at fault."""
from __future__ import annotations

from typing import Literal

import eegtools.errors

ErrorCode = Literal[
    "bad_argument",  # wrong type, missing, or out of the allowed values
    "unknown_id",  # no shared_state entry has this id (or it was lost with a kernel restart)
    "wrong_kind",  # the id exists but holds another kind of object (a table where a signal is needed)
    "unknown_channel",
    "out_of_range",  # a time window or index outside the data
    "unsupported",  # a format, method or combination the tool does not handle
    "forbidden_path",  # a path outside /input (reading) or /workspace/file_check (writing)
    "budget_exceeded",  # the result or an intermediate array would be too large
    "failed",  # the computation itself raised (the message says what)
]
ERROR_CODES: tuple[str, ...] = ErrorCode.__args__  # type: ignore[attr-defined]


class ToolError(eegtools.errors.ToolError):
    """A refused or failed tool call; `to_dict` is the error the agent sees ({"error": {...}})."""

    codes = ERROR_CODES

    def __init__(self, code: ErrorCode, message: str, *, argument: str | None = None) -> None:
        super().__init__(code, message, argument=argument)  # type: ignore[arg-type]  # codes widened above
