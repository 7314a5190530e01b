"""The one error type every tool raises: a code the agent can act on, and the argument at fault."""
from __future__ import annotations

from typing import Any, Literal

ErrorCode = Literal["unknown_channel", "out_of_range", "unsupported", "bad_argument", "budget_exceeded"]
ERROR_CODES: tuple[str, ...] = (
    "unknown_channel", "out_of_range", "unsupported", "bad_argument", "budget_exceeded",
)


class ToolError(ValueError):
    """A refused tool call. Nothing was computed; `to_dict` is the standardized error response."""

    codes: tuple[str, ...] = ERROR_CODES  # a toolset with more codes subclasses and widens this

    def __init__(self, code: ErrorCode, message: str, *, argument: str | None = None) -> None:
        if code not in self.codes:
            raise ValueError(f"ToolError code {code!r} is not one of {self.codes}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.argument = argument

    def to_dict(self) -> dict[str, Any]:
        """The standardized error response: {"error": {"code", "argument", "message"}}."""
        return {"error": {"code": self.code, "argument": self.argument, "message": self.message}}
