"""Statistics over results: read parts of a result, rank, aggregate, compare, threshold, correlate.

They work on per-name results ({name: {feature: value}}, as the feature tools make) and on
numbers; a `feature` picks the value inside each name's record.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from braintools import refs
from braintools.errors import ToolError
from braintools.registry import result, tool


@tool("statistics")
def get_result(result_id: str, path: str | None = None) -> dict[str, object]:
    """A part of a stored result: `path` is dot-separated keys or indices, e.g. "O1.alpha".

    Parameters
    ----------
    %(result_id_any)s
    path : str, optional
        Keys into the value (default: the whole value).
    """
    value = refs.result_value(result_id, "result_id")
    for part in (path.split(".") if path else []):
        value = _step(value, part, path or "")
    return {"value": value}


@tool("statistics")
def rank(result_id: str, feature: str | None = None, descending: bool = True, top_k: int | None = None,
         absolute: bool = False, labels: list[str] | None = None) -> dict[str, object]:
    """Names ordered by a feature's value (ties keep the result's order).

    The ranking lists the names ("order"), their values, their positions in the result
    ("positions", 0-based) and, when `labels` are given, the label of each ranked name.

    Parameters
    ----------
    %(result_id)s
    feature : str, optional
        The feature inside each name's record (omit when each name maps to a number).
    descending : bool, optional
        Largest first.
    top_k : int, optional
        Keep only the first k names.
    absolute : bool, optional
        Rank by absolute value.
    labels : list of str, optional
        A label per name, in the result's order (e.g. ["first", "second"]); labels beyond the names are ignored.
    """
    values = refs.named_values(result_id, feature)
    if labels is not None and len(labels) < len(values):
        raise ToolError("bad_argument", f"labels: {len(labels)} labels for {len(values)} names", argument="labels")
    keyed = [(abs(v) if absolute else v, i, n) for i, (n, v) in enumerate(values.items())]
    keyed.sort(key=lambda t: ((-t[0] if descending else t[0]), t[1]))
    kept = keyed[: top_k or None]
    ranking: dict[str, object] = {"order": [n for _, _, n in kept], "values": [values[n] for _, _, n in kept],
                                  "positions": [i for _, i, _ in kept]}
    if labels is not None:
        ranking["labels"] = [labels[i] for _, i, _ in kept]
    return {"ranking": result("ranking", ranking, feature=feature)}


@tool("statistics")
def aggregate(result_id: str, feature: str | None = None, how: Literal["mean", "median", "sum", "min", "max", "std", "count"] = "mean",
              names: list[str] | None = None) -> dict[str, object]:
    """One number over names (e.g. the mean relative alpha over channels).

    Parameters
    ----------
    %(result_id)s
    %(feature)s
    how : str, optional
        The aggregate.
    names : list of str, optional
        Only these names (default all).
    """
    values = refs.named_values(result_id, feature)
    chosen = [values[n] for n in names] if names else list(values.values())
    if names and any(n not in values for n in names):
        raise ToolError("bad_argument", f"names: not in the result: {[n for n in names if n not in values]}", argument="names")
    array = np.asarray(chosen, float)
    reducers: dict[str, Callable[[np.ndarray], Any]] = {"mean": np.mean, "median": np.median, "sum": np.sum, "min": np.min,
                                                       "max": np.max, "std": np.std, "count": len}
    return {"aggregate": result("aggregate", float(reducers[how](array)), how=how, feature=feature, n=len(array))}


@tool("statistics")
def compare(a: float, b: float,
            operation: Literal["ratio", "difference", "decibel_ratio", "percent_change", "greater", "log_ratio"] = "ratio",
            ) -> dict[str, object]:
    """Compare two numbers: a/b, a-b, 10*log10(a/b), 100*(a-b)/b, whether a > b, or ln(a/b).

    Parameters
    ----------
    a : float
        First number.
    b : float
        Second number.
    operation : str, optional
        What to compute.
    """
    ops: dict[str, Callable[[], float | bool]] = {
        "ratio": lambda: a / b,
        "difference": lambda: a - b,
        "decibel_ratio": lambda: 10 * math.log10(a / b),
        "percent_change": lambda: 100 * (a - b) / b,
        "greater": lambda: a > b,
        "log_ratio": lambda: math.log(a / b),
    }
    try:
        value = ops[operation]()
    except (ZeroDivisionError, ValueError) as exc:
        raise ToolError("bad_argument", f"b: {operation} undefined for a={a}, b={b} ({exc})", argument="b") from None
    return {"comparison": result("comparison", value, operation=operation)}


@tool("statistics")
def compare_results(a: str, b: str, feature: str | None = None,
                    operation: Literal["ratio", "difference", "decibel_ratio", "log_ratio"] = "difference",
                    feature_b: str | None = None) -> dict[str, object]:
    """Name by name comparison of two per-name results (e.g. condition A minus condition B per channel).

    `a` and `b` may be the same result: with `feature_b`, two features of each name are
    compared (e.g. theta / beta per channel). "log_ratio" is the natural log of a/b.

    Parameters
    ----------
    a : str
        Id of the first per-name result.
    b : str
        Id of the second.
    %(feature)s
    operation : str, optional
        What to compute per name.
    feature_b : str, optional
        The feature read from `b` (default: `feature`).
    """
    va, vb = refs.named_values(a, feature, "a"), refs.named_values(b, feature_b or feature, "b")
    common = [n for n in va if n in vb]
    ops: dict[str, Callable[[float, float], float]] = {"ratio": lambda x, y: x / y, "difference": lambda x, y: x - y,
                                                      "decibel_ratio": lambda x, y: 10 * math.log10(x / y),
                                                      "log_ratio": lambda x, y: math.log(x / y)}
    return {"comparison": result("per_name", {n: {"value": ops[operation](va[n], vb[n])} for n in common}, operation=operation)}


@tool("statistics")
def threshold(result_id: str, value: float, feature: str | None = None,
              operation: Literal[">", ">=", "<", "<=", "abs>", "abs>="] = ">") -> dict[str, object]:
    """The names whose feature passes a threshold, in the result's order.

    Parameters
    ----------
    %(result_id)s
    value : float
        The threshold.
    %(feature)s
    operation : str, optional
        The comparison.
    """
    values = refs.named_values(result_id, feature)
    tests = {">": lambda v: v > value, ">=": lambda v: v >= value, "<": lambda v: v < value, "<=": lambda v: v <= value,
             "abs>": lambda v: abs(v) > value, "abs>=": lambda v: abs(v) >= value}
    names = [n for n, v in values.items() if tests[operation](v)]
    return {"selection": result("selection", {"names": names, "count": len(names), "of": len(values)})}


@tool("statistics")
def merge_selections(a: str, b: str, how: Literal["union", "intersection", "difference"] = "union") -> dict[str, object]:
    """Combine two selections (threshold results): names in either, in both, or in `a` but not `b`.

    Names keep `a`'s order, then `b`'s for names only `b` holds.

    Parameters
    ----------
    a : str
        Id of a selection.
    b : str
        Id of another selection.
    how : str, optional
        The set operation.
    """
    first, second = _selection(a, "a"), _selection(b, "b")
    combined = {"union": first + [n for n in second if n not in first],
                "intersection": [n for n in first if n in second],
                "difference": [n for n in first if n not in second]}[how]
    return {"selection": result("selection", {"names": combined, "count": len(combined)}, how=how)}


@tool("statistics")
def robust_z(result_id: str, feature: str | None = None, scale: float = 1.4826) -> dict[str, object]:
    """Robust z-scores per name: (value - median) / (scale * median absolute deviation).

    Parameters
    ----------
    %(result_id)s
    %(feature)s
    scale : float, optional
        Factor on the MAD (1.4826 makes it a standard deviation for normal data).
    """
    values = refs.named_values(result_id, feature)
    array = np.asarray(list(values.values()), float)
    median = float(np.median(array))
    mad = float(np.median(np.abs(array - median))) * scale
    z = {n: {"value": v, "z": (v - median) / mad if mad > 0 else 0.0} for n, v in values.items()}
    return {"z": result("robust_z", z, median=median, scaled_mad=mad)}


@tool("statistics")
def round_values(result_id: str, decimals: int) -> dict[str, object]:
    """A copy of a result with every number rounded (Python's round) to `decimals`.

    Parameters
    ----------
    %(result_id_any)s
    decimals : int
        Decimal places.
    """
    return {"rounded": result("rounded", _round(refs.result_value(result_id, "result_id"), decimals), decimals=decimals)}


def _round(value: Any, decimals: int) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return round(float(value), decimals)
    if isinstance(value, dict):
        return {k: _round(v, decimals) for k, v in value.items()}
    if isinstance(value, list):
        return [_round(v, decimals) for v in value]
    return value


def _selection(result_id: str, argument: str) -> list[str]:
    value = refs.result_value(result_id, argument)
    if not isinstance(value, dict) or not isinstance(value.get("names"), list):
        raise ToolError("wrong_kind", f"{argument}: {result_id} is not a selection (threshold result)", argument=argument)
    return [str(n) for n in value["names"]]


def _step(value: Any, part: str, path: str) -> Any:
    if isinstance(value, dict) and part in value:
        return value[part]
    if isinstance(value, list) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(value):
        return value[int(part)]
    raise ToolError("bad_argument", f"path: {part!r} of {path!r} is not in the result", argument="path")
