"""Reading EEGAgentBench answers as the parser extracted them (JSON values or text).

Every reader returns a normal form or None for an unusable answer, never raises on what a
model wrote: the caller decides what None means (wrong for T1-T4 and T5, all-wake for T6).
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping, Sequence

STAGES = ("W", "N1", "N2", "N3", "REM")
EPOCH_S = 30
_STAGE_ALIASES = {
    "w": "W", "wake": "W", "awake": "W",
    "n1": "N1", "s1": "N1", "stage1": "N1",
    "n2": "N2", "s2": "N2", "stage2": "N2",
    "n3": "N3", "s3": "N3", "s4": "N3", "stage3": "N3", "sws": "N3",
    "rem": "REM", "r": "REM",
}
_OPTION_FORMS = (
    re.compile(r"^\(?([A-D])\)?[.:)]?$", re.I),                # B, (B), B., B)
    re.compile(r"^(?:option|answer)\s*:?\s*\(?([A-D])\)?\b", re.I),  # Option B, answer: (B)
    re.compile(r"^\(?([A-D])\)?[.:)]\s+\S", re.I),            # B. 3 Hz spike & wave
)


def read_label(value: Any, labels: Sequence[str]) -> str | None:
    """A class label from the task's label set, matched after lower-casing and stripping
    whitespace; None when the answer is not one of them."""
    if not isinstance(value, str):
        return None
    wanted = value.strip().casefold()
    return next((label for label in labels if label.casefold() == wanted), None)


def read_option(value: Any, options: Mapping[str, str]) -> str | None:
    """The chosen option letter of a four-option question: "B", "(B)", "Option B", "B. text",
    or the verbatim option text; None when no single option can be recovered."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    for form in _OPTION_FORMS:
        match = form.match(text)
        if match and match.group(1).upper() in options:
            return match.group(1).upper()
    restated = [letter for letter, option in options.items()
                if _squash(option) == _squash(text)]
    return restated[0] if len(restated) == 1 else None


def read_intervals(value: Any) -> list[tuple[float, float]] | None:
    """A T5 interval list: [[start_s, end_s], ...] or rows {"start": .., "end": ..}
    (also onset/offset). An empty list is a valid no-seizure answer; None means unusable
    (missing, not a list, or a row that is not a finite start < end pair)."""
    value = maybe_json(value)
    if not isinstance(value, list):
        return None
    out = []
    for row in value:
        pair = _interval_row(row)
        if pair is None:
            return None
        out.append(pair)
    return out


def expand_hypnogram(value: Any, n_epochs: int) -> list[str]:
    """The tolerant run-length expansion of §6.2 into exactly n_epochs stage labels.

    Rows are [start_epoch, end_epoch, stage] with inclusive epoch indices (the paper's
    example: [0,200,W], [201,216,N1]) or mappings with start/end(/_epoch) and stage.
    Gaps are wake; later rows overwrite earlier ones (last-written wins); unknown stages are
    wake; malformed rows are skipped; epochs beyond n_epochs are dropped; a missing, empty or
    unusable answer is all wake. The result always has the reference length."""
    labels = ["W"] * n_epochs
    rows = maybe_json(value)
    if not isinstance(rows, list):
        return labels
    for row in rows:
        parsed = _hypnogram_row(row)
        if parsed is None:
            continue
        start, end, stage = parsed
        for epoch in range(max(start, 0), min(end, n_epochs - 1) + 1):
            labels[epoch] = stage
    return labels


def run_length(labels: Sequence[str]) -> list[list[Any]]:
    """Per-epoch labels as inclusive [start_epoch, end_epoch, stage] rows."""
    rows: list[list[Any]] = []
    for index, stage in enumerate(labels):
        if rows and rows[-1][2] == stage:
            rows[-1][1] = index
        else:
            rows.append([index, index, stage])
    return rows


def read_stage(value: Any) -> str:
    """A stage name in the five-class set; anything unrecognised is wake (§6.2)."""
    if not isinstance(value, str):
        return "W"
    key = re.sub(r"[\s_\-]+", "", value.strip().casefold())
    key = key.removeprefix("sleepstage")
    return _STAGE_ALIASES.get(key, "W")


def _hypnogram_row(row: Any) -> tuple[int, int, str] | None:
    if isinstance(row, Mapping):
        start = _first(row, ("start_epoch", "start", "from"))
        end = _first(row, ("end_epoch", "end", "to"))
        stage = _first(row, ("stage", "label"))
    elif isinstance(row, (list, tuple)) and len(row) == 3:
        start, end, stage = row
    else:
        return None
    start, end = _as_int(start), _as_int(end)
    if start is None or end is None or end < start:
        return None
    return start, end, read_stage(stage)


def _interval_row(row: Any) -> tuple[float, float] | None:
    if isinstance(row, Mapping):
        start = _first(row, ("start", "onset", "start_s"))
        end = _first(row, ("end", "offset", "end_s"))
    elif isinstance(row, (list, tuple)) and len(row) == 2:
        start, end = row
    else:
        return None
    start, end = _as_float(start), _as_float(end)
    if start is None or end is None or not end > start:
        return None
    return start, end


def _first(row: Mapping[str, Any], keys: Sequence[str]) -> Any:
    return next((row[k] for k in keys if k in row), None)


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def _as_int(value: Any) -> int | None:
    number = _as_float(value)
    if number is None or not number.is_integer():
        return None
    return int(number)


def maybe_json(value: Any) -> Any:
    """Text holding a JSON list, parsed (None when it does not parse); anything else as it is."""
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value


def _squash(text: str) -> str:
    return re.sub(r"[\s.]+", " ", text).strip().casefold()
