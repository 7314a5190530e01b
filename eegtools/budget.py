"""The output budget: a call whose result would be too large is refused before any computing.

Tokens are estimated at about 4 characters each (the paper's rule of thumb). Every tool knows
its row count and a representative row from its arguments alone, so the estimate needs no data.
"""
from __future__ import annotations

import json

from eegtools.errors import ToolError

DEFAULT_BUDGET_TOKENS = 8000
CHARS_PER_TOKEN = 4
SAMPLE_VALUE = -1234.5678  # a typical rounded number's width in the JSON output
HEADER_CHARS = 200  # record id, time range, column names and other fixed fields


def estimate_tokens(rows: int, sample_row: object) -> int:
    """Tokens of `rows` rows shaped like `sample_row` plus a fixed header."""
    row_chars = len(json.dumps(sample_row, separators=(",", ":"))) + 1
    return (HEADER_CHARS + rows * row_chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def check_budget(tool: str, rows: int, sample_row: object, budget_tokens: int | None, what: str) -> int:
    """Raise budget_exceeded (naming the row count) when the estimate passes the budget."""
    tokens = estimate_tokens(rows, sample_row)
    if budget_tokens is not None and tokens > budget_tokens:
        raise ToolError(
            "budget_exceeded",
            f"Output too large: {tool} would return {what} = {rows} rows (~{tokens} tokens), "
            f"exceeding the {budget_tokens}-token tool-output budget. Nothing was computed; "
            "narrow the time range or channels, or use longer windows/steps.",
            argument=None,
        )
    return tokens
