"""SzCORE-style event scoring and Dice@seizure for T5 (EEGAgentBench §6.3-6.4, Table 3).

Event scoring works on integer ticks of 0.1 s (the paper's 10 Hz resolution), so boundary
comparisons (a gap of exactly 90 s, an overlap of exactly 0 s) are exact. Per record:
(1) clip to [0, duration] and quantize; (2) sort, then merge neighbours whose gap is strictly
shorter than 90 s (overlapping and nested events merge too); (3) split events longer than
300 s into consecutive 300 s pieces; (4) extend each reference event 30 s before and 60 s after,
clipped to the record; (5) TP per extended reference event that some predicted event overlaps
for a positive duration, FN otherwise; (6) FP per predicted event overlapping no extended
reference event. Events that quantize to zero length are dropped (they cover no time).

Dice works in seconds on the intervals as given (clipped to the record when its duration is
known): within each set overlapping or touching intervals are merged, then
2|R n P| / (|R| + |P|); both empty -> 1, reference non-empty and prediction empty -> 0.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

TICKS_PER_SECOND = 10


@dataclass(frozen=True)
class EventParameters:
    """Table 3 of the paper; values in seconds."""

    min_overlap_s: float = 0.0
    tolerance_start_s: float = 30.0
    tolerance_end_s: float = 60.0
    min_gap_s: float = 90.0
    max_event_s: float = 300.0


DEFAULT_PARAMETERS = EventParameters()


@dataclass(frozen=True)
class EventCounts:
    """Event-level true positives, false positives and false negatives."""
    tp: int
    fp: int
    fn: int
    duration_s: float

    @property
    def ref_events(self) -> int:
        """Number of reference events (TP + FN)."""
        return self.tp + self.fn


Interval = tuple[float, float]


def quantize(intervals: Sequence[Interval], duration_s: float) -> list[tuple[int, int]]:
    """Step 1: clip to the record and round to 0.1 s ticks; zero-length events are dropped."""
    end_tick = _ticks(duration_s)
    out = []
    for start, end in intervals:
        lo = min(max(_ticks(start), 0), end_tick)
        hi = min(max(_ticks(end), 0), end_tick)
        if hi > lo:
            out.append((lo, hi))
    return out


def merge_close(events: list[tuple[int, int]], min_gap: int) -> list[tuple[int, int]]:
    """Step 2: sorted, neighbours with a gap strictly shorter than min_gap merged."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(events):
        if merged and start - merged[-1][1] < min_gap:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def split_long(events: list[tuple[int, int]], max_len: int) -> list[tuple[int, int]]:
    """Step 3: events longer than max_len become consecutive pieces of max_len (last shorter)."""
    pieces = []
    for start, end in events:
        while end - start > max_len:
            pieces.append((start, start + max_len))
            start += max_len
        pieces.append((start, end))
    return pieces


def processed_events(intervals: Sequence[Interval], duration_s: float,
                     params: EventParameters = DEFAULT_PARAMETERS) -> list[tuple[int, int]]:
    """Steps 1-3 for one set (reference or prediction), in ticks."""
    events = quantize(intervals, duration_s)
    events = merge_close(events, _ticks(params.min_gap_s))
    return split_long(events, _ticks(params.max_event_s))


def event_counts(reference: Sequence[Interval], predicted: Sequence[Interval], duration_s: float,
                 params: EventParameters = DEFAULT_PARAMETERS) -> EventCounts:
    """TP, FP and FN of one record (steps 1-6)."""
    ref = processed_events(reference, duration_s, params)
    pred = processed_events(predicted, duration_s, params)
    end_tick = _ticks(duration_s)
    before, after = _ticks(params.tolerance_start_s), _ticks(params.tolerance_end_s)
    extended = [(max(0, s - before), min(end_tick, e + after)) for s, e in ref]
    min_overlap = _ticks(params.min_overlap_s)
    tp = sum(any(_overlap(window, p) > min_overlap for p in pred) for window in extended)
    fp = sum(not any(_overlap(window, p) > 0 for window in extended) for p in pred)
    return EventCounts(tp=tp, fp=fp, fn=len(extended) - tp, duration_s=float(duration_s))


def f1_from_counts(tp: int, fp: int, fn: int) -> float:
    """2TP/(2TP+FP+FN); 0 when there is nothing to count (no TP is ever rewarded by silence)."""
    denominator = 2 * tp + fp + fn
    return 2 * tp / denominator if denominator else 0.0


def fp_per_24h(fp: int, duration_s: float) -> float:
    """False positives per 24 hours of recording."""
    return fp / (duration_s / 86400.0) if duration_s > 0 else 0.0


def dice(reference: Sequence[Interval], predicted: Sequence[Interval],
         duration_s: float | None = None) -> float:
    """Per-record temporal Dice with the paper's conventions for empty sets."""
    ref = _union(reference, duration_s)
    pred = _union(predicted, duration_s)
    if not ref:
        return 1.0 if not pred else 0.0
    if not pred:
        return 0.0
    covered = _length(ref) + _length(pred)
    both = sum(_overlap(r, p) for r in ref for p in pred)
    return 2 * both / covered if covered else 0.0


def _union(intervals: Sequence[Interval], duration_s: float | None) -> list[Interval]:
    spans = []
    for start, end in intervals:
        if duration_s is not None:
            start, end = min(max(start, 0.0), duration_s), min(max(end, 0.0), duration_s)
        if end > start:
            spans.append((float(start), float(end)))
    merged: list[Interval] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:  # overlapping or touching
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _length(spans: list[Interval]) -> float:
    return sum(end - start for start, end in spans)


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> float:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def _ticks(seconds: float) -> int:
    return int(round(float(seconds) * TICKS_PER_SECOND))
