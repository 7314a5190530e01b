"""The deterministic validation units, with BrainBench's semantics.

numeric_check, categorical_check, set_match_check and sequence_match_check. Each is a pure
`(predicted, params) -> UnitOutcome` function, described for the registry by a `Unit` below
(DETERMINISTIC_UNITS). `predicted` is whatever the parser extracted (JSON types or None);
`params` is the metric's params, holding the reference in `ground_truth` (BrainBench's own
case files call it `gt_value`; both are read).

Two kinds of failure are kept apart on purpose:
- a bad prediction (missing, wrong type, non-finite, wrong value) scores 0 with a detail
  saying why: that is the model's failure and counts;
- bad params (no ground truth, negative tolerance, unknown match_mode) raise
  MetricConfigError: that is a benchmark bug and must never turn into a score.
The units that need more than the parsed value (artifacts, judges) live in
validation/artifacts/ and validation/judge.py; EEGAgentBench's in validation/agentbench/.

Canonical form C(.) (BrainBench paper, C.2): surrounding whitespace removed, case ignored,
numbers written one way (1, 1.0, "1.0" and "1e0" all read "1"; 12 significant digits, so
float noise like 0.30000000000000004 reads "0.3"); set and sequence elements additionally
lose every internal whitespace character.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, localcontext
from typing import Any

from validation.errors import MetricConfigError
from validation.unit import (
    Chance,
    ChanceCase,
    Unit,
    UnitOutcome,
    fail,
    ground_truth,
    ignoring_context,
    result,
)

# A plain number, then optionally one unit token ("12.3 Hz", "25%", "2.1 uV^2/Hz").
# The unit is read and ignored: it is never converted (the instruction fixes the unit).
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_NUMERIC_TEXT = re.compile(
    rf"^\s*(?P<num>{_NUMBER})(?:\s*(?P<unit>[^\s\d+\-.,;:()\[\]{{}}][^\s]{{0,15}}))?\s*$"
)
_PLAIN_NUMBER = re.compile(rf"^\s*{_NUMBER}\s*$")
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")
_LIST_SEPARATORS = re.compile(r"[,;]")  # no \s* around: that backtracks quadratically
_SIGNIFICANT_DIGITS = 12
_MAX_INT_DIGITS = 4000  # below Python's int/str conversion limit (4300)
SPREAD_CHANCE = 0.2  # numeric/set/sequence: a constant answer may score on <= 20% of instances


# --- shared conversions ------------------------------------------------------------------

def to_decimal(value: Any) -> tuple[Decimal | None, str]:
    """A finite scalar as an exact decimal, or (None, why not).

    Accepts int and float (not bool), and strings holding one number with an optional
    trailing unit token. Floats go through repr, the shortest text that round-trips, so
    0.4 means 0.4 and not its binary neighbour.
    """
    if value is None:
        return None, "missing"
    if isinstance(value, bool):
        return None, f"boolean {value!r} is not a number"
    if isinstance(value, int):
        if not _int_is_finite(value):
            return None, "too large to be a finite float"
        return Decimal(value), ""
    if isinstance(value, float):
        if not math.isfinite(value):
            return None, f"{value!r} is not finite"
        return Decimal(repr(value)), ""
    if isinstance(value, str):
        match = _NUMERIC_TEXT.match(value.replace("\u2212", "-"))  # typographic minus
        if match is None:
            return None, f"{_short(value)} is not a number"
        number = Decimal(match.group("num"))
        if not math.isfinite(float(number)):
            return None, f"{_short(value)} is not finite"
        return number, ""
    return None, f"expected a single number, got {type(value).__name__}"


def _int_is_finite(value: int) -> bool:
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _config_number(value: Any, what: str) -> Decimal:
    """A number in params: int, float or plain numeric text (no unit); finite."""
    if isinstance(value, str) and not _PLAIN_NUMBER.match(value):
        raise MetricConfigError(f"{what} must be a finite number, got {_short(value)}")
    number, why = to_decimal(value)
    if number is None:
        raise MetricConfigError(f"{what} must be a finite number ({why})")
    return number


def canonical(value: Any) -> str:
    """C(.) for a scalar: trimmed, case-folded, numbers in one spelling."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return _canonical_int(value)
    if isinstance(value, float):
        return _canonical_float(value)
    if isinstance(value, str):
        text = value.strip()
        if _INTEGER.match(text) and len(text) <= _MAX_INT_DIGITS:
            return str(int(text))
        if _PLAIN_NUMBER.match(text):
            return _canonical_float(float(text))
        return text.casefold()
    return json.dumps(value, sort_keys=True, default=str).casefold()


def canonical_token(value: Any) -> str:
    """C(.) for a set or sequence element: also without internal whitespace."""
    return re.sub(r"\s+", "", canonical(value))


def _canonical_int(value: int) -> str:
    try:
        return str(value)
    except ValueError:  # beyond Python's int-to-text digit limit
        return format(Decimal(value), f".{_SIGNIFICANT_DIGITS}g").casefold()


def _canonical_float(value: float) -> str:
    if not math.isfinite(value):
        return repr(value).casefold()
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return format(value, f".{_SIGNIFICANT_DIGITS}g").casefold()


def as_items(value: Any) -> list[Any] | None:
    """A collection as a list: lists as is, text split on commas/semicolons, a scalar as one item.

    None (missing) and mappings give None: they are not a collection.
    """
    if value is None or isinstance(value, dict):
        return None
    if isinstance(value, (list, tuple)):
        return list(value)
    if not isinstance(value, str):
        return [value]
    text = value.strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, list):
            return parsed
    text = text.strip("[]() \t\n")
    parts = (p.strip().strip("'\"").strip() for p in _LIST_SEPARATORS.split(text))
    return [p for p in parts if p]


def _dedup(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _num(value: Decimal) -> str:
    text = str(value)
    return text if len(text) <= 30 else format(value, ".17g")


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _param_int(params: Mapping[str, Any], name: str, default: int | None, low: int) -> int | None:
    value = params.get(name, default)
    if value is None:
        return None
    integral = isinstance(value, int) or isinstance(value, float) and value.is_integer()
    if isinstance(value, bool) or not integral:
        raise MetricConfigError(f"params.{name} must be an integer, got {value!r}")
    if int(value) < low:
        raise MetricConfigError(f"params.{name} must be >= {low}, got {value!r}")
    return int(value)


def _gt_items(params: Mapping[str, Any]) -> list[Any]:
    truth = ground_truth(params)
    items = as_items(truth)
    if items is None:
        raise MetricConfigError(f"ground_truth must be a list, got {_short(truth)}")
    return items


# --- numeric -----------------------------------------------------------------------------

def numeric_check(predicted: Any, params: Mapping[str, Any]) -> UnitOutcome:
    """1 if |pred - gt| <= tolerance (absolute; 0 means equal), else 0.

    The difference is taken on the decimal values as written, so a prediction exactly at
    the tolerance passes (binary floats would put 0.4 - 0.3 just above 0.1).
    """
    truth = _config_number(ground_truth(params), "ground_truth")
    tolerance = _config_number(params.get("tolerance", 0), "params.tolerance")
    if tolerance < 0:
        raise MetricConfigError(f"params.tolerance must be >= 0, got {tolerance}")
    pred, why = to_decimal(predicted)
    if pred is None:
        return fail(f"prediction {why}")
    with localcontext() as ctx:
        ctx.prec = 1000  # exact for any pair of floats or short decimal strings
        diff = abs(pred - truth)
    verdict = "<=" if diff <= tolerance else ">"
    detail = f"|{_num(pred)} - {_num(truth)}| = {_num(diff)} {verdict} tolerance {_num(tolerance)}"
    return result(1.0 if diff <= tolerance else 0.0, detail)


# --- categorical -------------------------------------------------------------------------

def categorical_check(predicted: Any, params: Mapping[str, Any]) -> UnitOutcome:
    """1 if C(pred) == C(gt), else 0."""
    truth = ground_truth(params)
    if truth is None or isinstance(truth, (list, dict)):
        raise MetricConfigError(f"ground_truth must be a single label, got {_short(truth)}")
    if predicted is None:
        return fail("prediction missing")
    if isinstance(predicted, (list, dict)):
        return fail(f"expected a single label, got {type(predicted).__name__}")
    pred_c, truth_c = canonical(predicted), canonical(truth)
    if pred_c == truth_c:
        return result(1.0, f"{pred_c!r} == {truth_c!r}")
    return result(0.0, f"{_short(pred_c)} != {truth_c!r}")


# --- set ---------------------------------------------------------------------------------

def set_match_check(predicted: Any, params: Mapping[str, Any]) -> UnitOutcome:
    """Set of the first top_k predicted elements vs the reference set.

    exact: 1 if the sets are equal. per_hit_fraction: |hits| * score_per_hit (default
    1/|S|), capped at 1; extra predicted elements cost nothing unless top_k cuts them.
    Duplicates count toward top_k before they collapse.
    """
    mode = str(params.get("match_mode", "exact")).strip().lower()
    if mode not in ("exact", "per_hit_fraction"):
        raise MetricConfigError(f"params.match_mode {mode!r} is not exact or per_hit_fraction")
    top_k = _param_int(params, "top_k", None, 0) or None  # 0 means no cut, as in BrainBench
    truth = {canonical_token(x) for x in _gt_items(params)}
    per_hit = _score_per_hit(params, truth)

    items = as_items(predicted)
    if items is None:
        why = "missing" if predicted is None else "is not a collection"
        return fail(f"prediction {why}")
    tokens = [canonical_token(x) for x in items]
    kept = tokens[:top_k] if top_k else tokens
    pred = set(kept)
    hits = pred & truth
    cut = f" (first {top_k} of {len(tokens)})" if top_k and len(tokens) > top_k else ""
    detail = f"predicted {_short(sorted(pred))}{cut} vs {_short(sorted(truth))}: {len(hits)} hit(s)"
    if not truth:
        return result(1.0 if not pred else 0.0, detail + "; empty reference set")
    if mode == "exact":
        return result(1.0 if pred == truth else 0.0, detail + ", exact")
    return result(len(hits) * per_hit, detail + f" x {per_hit:.6g} per hit")


def _score_per_hit(params: Mapping[str, Any], truth: set[str]) -> float:
    raw = params.get("score_per_hit")
    if raw is None:
        return 1.0 / len(truth) if truth else 0.0
    value = _config_number(raw, "params.score_per_hit")
    if value < 0:
        raise MetricConfigError(f"params.score_per_hit must be >= 0, got {raw!r}")
    return float(value)


# --- sequence ----------------------------------------------------------------------------

_SEQUENCE_MODES = ("weighted_partial_order", "exact_order", "per_hit_fraction_order")


def sequence_match_check(predicted: Any, params: Mapping[str, Any]) -> UnitOutcome:
    """Ordered outputs (rankings, stage sequences); match_mode default weighted_partial_order.

    per_hit_fraction_order: share of reference positions i where pred[i] == gt[i].
    exact_order / weighted_partial_order compare the first top_k (default len(gt)) distinct
    elements of each side, first occurrence kept:
      exact_order: 1 if the two lists are equal.
      weighted_partial_order: with O the reference elements also predicted,
        0 if |O| < min_overlap (default 1), else
        coverage * position = |O|/|G| * sum_{x in O} w[g(x)] * s(x) / sum_i w[i],
        s(x) = max(0, 1 - |g(x) - p(x)| / (allow_order_slip + 1)), w[i] = 1/(i+1) by default.
    """
    mode = str(params.get("match_mode", "weighted_partial_order")).strip().lower()
    if mode not in _SEQUENCE_MODES:
        raise MetricConfigError(f"params.match_mode {mode!r} is not one of {_SEQUENCE_MODES}")
    truth_items = _gt_items(params)
    if mode == "per_hit_fraction_order":
        return _positionwise(predicted, [canonical_token(x) for x in truth_items])
    top_k = _param_int(params, "top_k", max(1, len(truth_items)), 1)
    truth = _dedup([canonical_token(x) for x in truth_items])[:top_k]
    weights = _position_weights(params, len(truth))
    min_overlap = _param_int(params, "min_overlap", 1, 0)
    slip = _param_int(params, "allow_order_slip", 0, 0)

    items = as_items(predicted)
    if items is None:
        return fail("prediction missing" if predicted is None else "prediction is not a sequence")
    pred = _dedup([canonical_token(x) for x in items])[:top_k]
    detail = f"predicted {_short(pred)} vs {_short(truth)}"
    if not truth:
        return result(1.0 if not pred else 0.0, detail + "; empty reference")
    if mode == "exact_order":
        return result(1.0 if pred == truth else 0.0, detail + ", exact order")
    return _weighted_order(pred, truth, weights, min_overlap, slip, detail)


def _positionwise(predicted: Any, truth: list[str]) -> UnitOutcome:
    items = as_items(predicted)
    if items is None:
        return fail("prediction missing" if predicted is None else "prediction is not a sequence")
    pred = [canonical_token(x) for x in items]
    detail = f"predicted {_short(pred)} vs {_short(truth)}"
    if not truth:
        return result(1.0 if not pred else 0.0, detail + "; empty reference")
    hits = sum(1 for i, t in enumerate(truth) if i < len(pred) and pred[i] == t)
    return result(hits / len(truth), detail + f": {hits}/{len(truth)} positions")


def _position_weights(params: Mapping[str, Any], n: int) -> list[float]:
    raw = params.get("position_weights")
    if raw is None:
        return [1.0 / (i + 1) for i in range(n)]
    if not isinstance(raw, list) or len(raw) < n:
        raise MetricConfigError(f"params.position_weights must be a list of >= {n} numbers")
    weights = []
    for w in raw[:n]:
        value = _config_number(w, "params.position_weights[i]")
        if value < 0:
            raise MetricConfigError(f"params.position_weights has a negative weight {w!r}")
        weights.append(float(value))
    if n and sum(weights) <= 0:
        raise MetricConfigError("params.position_weights sum to 0")
    return weights


def _weighted_order(
    pred: list[str], truth: list[str], weights: list[float], min_overlap: int | None, slip: int | None,
    detail: str,
) -> UnitOutcome:
    pred_pos = {x: i for i, x in enumerate(pred)}
    overlap = [x for x in truth if x in pred_pos]
    if min_overlap is None:  # an explicit null in params (it used to fail with a TypeError here)
        raise MetricConfigError("params.min_overlap must be an integer, got None")
    if len(overlap) < min_overlap:
        return result(0.0, detail + f": overlap {len(overlap)} < min_overlap {min_overlap}")
    if slip is None and overlap:  # an explicit null in params (it used to fail with a TypeError here)
        raise MetricConfigError("params.allow_order_slip must be an integer, got None")
    width = (slip or 0) + 1
    placed = math.fsum(
        weights[g] * max(0.0, 1.0 - abs(g - pred_pos[x]) / width)
        for g, x in enumerate(truth)
        if x in pred_pos
    )
    position = placed / math.fsum(weights)
    coverage = len(overlap) / len(truth)
    return result(
        coverage * position,
        detail + f": coverage {coverage:.6g} x position {position:.6g} (slip {slip})",
    )


# --- chance levels of the constant-answer baseline ----------------------------------------

def spread_chance(cases: Sequence[ChanceCase], distinct_answers: int) -> Chance:
    """numeric, set, sequence: a constant answer may be right on at most a fifth of the instances."""
    return Chance(SPREAD_CHANCE, "spread rule")


def categorical_chance(cases: Sequence[ChanceCase], distinct_answers: int) -> Chance:
    """1/len(params.classes); with params.classes_param (the candidates are listed per
    instance in the instruction, e.g. "which of these channels ..."), the mean over instances
    of 1/len(that binding parameter's list); with neither, 1/number of distinct answers (at
    least 2), flagged: the label set a guesser faces is then unknown."""
    name = cases[0].params.get("classes_param")
    if name:
        shares = []
        for case in cases:
            candidates = case.binding_params.get(name)
            if not isinstance(candidates, list) or not candidates:
                raise ValueError(f"{case.case_id}: classes_param {name!r} is not a non-empty list "
                                 "in the instance's reference params")
            shares.append(1.0 / len({json.dumps(x, sort_keys=True) for x in candidates}))
        return Chance(sum(shares) / len(shares), f"classes_param {name!r} (mean 1/len)")
    classes = [case.params.get("classes") for case in cases]
    declared = [c for c in classes if isinstance(c, list) and c]
    if declared:
        # the spec declares one label set; were it to differ by binding, a guesser faces the union
        union = {json.dumps(x, sort_keys=True) for c in declared for x in c}
        return Chance(1.0 / len(union), "classes")
    # A question has at least two possible answers: one distinct answer is no excuse.
    return Chance(1.0 / max(2, distinct_answers), "distinct answers (no classes declared)",
                  classes_missing=True)


# --- when two pipelines give the same answer (an "agree" ensemble) -------------------------


def set_key(value: Any) -> str:
    """A set's members whatever their order and case."""
    return repr(sorted({str(v).strip().casefold() for v in value}))


def sequence_key(value: Any) -> str:
    """A sequence's items in order, whatever their case."""
    return repr([str(v).strip().casefold() for v in value])


# --- the units ----------------------------------------------------------------------------

NUMERIC_CHECK = Unit(
    name="numeric_check", score=ignoring_context(numeric_check), deterministic=True,
    ground_truth_types=(int, float), chance=spread_chance, reasoned_params=("tolerance",), family="numeric",
    ensemble="median",
)
CATEGORICAL_CHECK = Unit(
    name="categorical_check", score=ignoring_context(categorical_check), deterministic=True,
    ground_truth_types=(str, int), chance=categorical_chance, family="categorical", ensemble="agree",
)
SET_MATCH_CHECK = Unit(
    name="set_match_check", score=ignoring_context(set_match_check), deterministic=True,
    ground_truth_types=(list,), chance=spread_chance, family="set", ensemble="agree", answer_key=set_key,
)
SEQUENCE_MATCH_CHECK = Unit(
    name="sequence_match_check", score=ignoring_context(sequence_match_check), deterministic=True,
    ground_truth_types=(list,), chance=spread_chance, family="sequence", ensemble="agree",
    answer_key=sequence_key,
)
DETERMINISTIC_UNITS = (NUMERIC_CHECK, CATEGORICAL_CHECK, SET_MATCH_CHECK, SEQUENCE_MATCH_CHECK)
