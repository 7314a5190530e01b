"""How a cell is written for people (terminal and HTML), by its column's kind."""
from __future__ import annotations

import math
from typing import Any

MISSING = "–"


def format_cell(value: Any, kind: str) -> str:
    """A value as text: score 1 decimal, share as %, estimate as "m [lo, hi]", p 3 digits."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    formatter = _FORMATTERS.get(kind)
    if formatter is None or isinstance(value, str):
        return _text(value)
    return _unsigned_zero(formatter(value))


def _unsigned_zero(text: str) -> str:
    """"-0.0" for a value that rounds to zero from below (e.g. a floor's rounding noise) is
    written "0.0": a reader takes the sign for a real deficit."""
    return text[1:] if text.startswith("-") and not any(c in "123456789" for c in text) else text


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _estimate(value: Any) -> str:
    if not isinstance(value, dict):
        return _text(value)
    return f"{value['value']:.1f} [{value['low']:.1f}, {value['high']:.1f}]"


def _p(value: Any) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _seconds(value: Any) -> str:
    if value >= 3600:
        return f"{value / 3600:.1f} h"
    return f"{value / 60:.1f} min" if value >= 120 else f"{value:.1f} s"


_FORMATTERS = {
    "int": lambda v: f"{int(v):,}",
    "float": lambda v: f"{v:.3f}" if abs(v) < 100 else f"{v:,.1f}",
    "count": lambda v: f"{v:,.1f}",
    "score": lambda v: f"{v:.1f}",
    "share": lambda v: f"{100 * v:.1f}%",
    "estimate": _estimate,
    "p": _p,
    "money": lambda v: f"${v:,.2f}",
    "seconds": _seconds,
}


def is_numeric(kind: str) -> bool:
    """Right-aligned kinds."""
    return kind != "text"
