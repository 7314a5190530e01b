"""Field-level comparison shared by the signal and table checks.

Score of a file = sum(weight * z) / sum(weight) over its fields, z in {0, 1} (BrainBench's
artifact rule). Each field compares a measured value with the expected one: integers and
lists exactly, floats within an absolute tolerance (0 = exact), signal_rms within a
relative one.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from validation.artifacts.spec import FieldCheck

# Absolute tolerance when a field names none. BrainBench's runner uses 1e-6 for both;
# eegbench's task files set their own where the reference value is rounded.
DEFAULT_TOLERANCE = {"sfreq_hz": 1e-6, "duration_sec": 1e-6, "total_duration_sec": 1e-6, "bandpass_hz": 1e-6}
RMS_RELATIVE_TOLERANCE = 0.10


def score_fields(fields: tuple[FieldCheck, ...], measure: Callable[[str], Any]) -> tuple[float, list[dict[str, Any]]]:
    """Weighted fraction of fields that match, and one record per field for the audit."""
    records = []
    for check in fields:
        try:
            measured = measure(check.name)
        except KeyError:
            records.append(_record(check, None, False, "not measurable for this file type"))
            continue
        except Exception as exc:  # a hostile file must cost the field, never the scoring run
            records.append(_record(check, None, False, f"measurement failed: {type(exc).__name__}"))
            continue
        ok, why = compare(check, measured)
        records.append(_record(check, measured, ok, why))
    total = math.fsum(c.weight for c in fields)
    if total <= 0:
        return 1.0, records
    earned = math.fsum(c.weight for c, r in zip(fields, records) if r["ok"])
    return earned / total, records


def compare(check: FieldCheck, measured: Any) -> tuple[bool, str]:
    """Whether a measured field matches its expected value, and how it compares."""
    expected = check.expected
    if measured is None:
        return False, "missing"
    if check.name == "signal_rms":
        return _within(measured, expected, check.tolerance
                       if check.tolerance is not None else abs(float(expected)) * RMS_RELATIVE_TOLERANCE)
    if isinstance(expected, bool) or isinstance(expected, str):
        return measured == expected, ""
    if isinstance(expected, int) and check.tolerance is None:
        return _as_int(measured) == expected, ""
    if isinstance(expected, (int, float)):
        tolerance = check.tolerance if check.tolerance is not None else DEFAULT_TOLERANCE.get(check.name, 0.0)
        return _within(measured, expected, tolerance)
    if isinstance(expected, list):
        return _list_match(check, measured, expected)
    return measured == expected, ""


def _list_match(check: FieldCheck, measured: Any, expected: list[Any]) -> tuple[bool, str]:
    if not isinstance(measured, list) or len(measured) != len(expected):
        return False, "length differs"
    tolerance = check.tolerance if check.tolerance is not None else DEFAULT_TOLERANCE.get(check.name)
    if tolerance is None:
        return measured == expected, ""
    # bandpass edges are stored as float32 in FIF: 0.1 reads back as 0.10000000149
    pairs = [_within(m, e, tolerance)[0] for m, e in zip(measured, expected)]
    return all(pairs), ""


def _within(measured: Any, expected: Any, tolerance: float) -> tuple[bool, str]:
    try:
        m, e = float(measured), float(expected)
    except (TypeError, ValueError):
        return False, "not a number"
    if not (math.isfinite(m) and math.isfinite(e)):
        return False, "not finite"
    if tolerance == 0:
        return m == e, ""
    return abs(m - e) <= tolerance, f"tolerance {tolerance:g}"


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _record(check: FieldCheck, measured: Any, ok: bool, why: str) -> dict[str, Any]:
    return {"field": check.name, "weight": check.weight, "expected": check.expected,
            "measured": measured, "ok": ok, **({"note": why} if why else {})}
