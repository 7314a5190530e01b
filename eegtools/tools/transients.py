"""Tool 8: transient candidates (brief, large deflections)."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import signal

from eegtools.budget import DEFAULT_BUDGET_TOKENS, SAMPLE_VALUE, check_budget
from eegtools.errors import ToolError
from eegtools.tools._common import (
    Count,
    FloatArray,
    NonNegative,
    RecordLike,
    ToolResult,
    Transient,
    _longest,
    _name,
    _open,
    _positive,
    _segment,
    _sig,
    _span,
    _uv,
)

# --- 8: transients --------------------------------------------------------------------


def detect_transients(
    record: RecordLike, channels: Sequence[str] | None = None, start_s: NonNegative | None = None,
    end_s: NonNegative | None = None, *, threshold: float = 5.0, min_width_ms: NonNegative = 20.0,
    max_width_ms: float = 200.0, max_candidates: Count = 50, budget_tokens: int | None = DEFAULT_BUDGET_TOKENS,
) -> ToolResult:
    """Transient candidates: brief, large deflections of the signal.

    Local extrema of the median-removed signal whose magnitude is at least `threshold`
    robust SDs (1.4826 x MAD) and whose width at half prominence lies in
    [min_width_ms, max_width_ms]. Each: time (s), channel, amplitude (µV, signed), width (ms),
    steepness (largest |slope| within one width of the peak, µV/ms). The `max_candidates`
    largest by |amplitude| are returned in time order, with the total found.

    Parameters
    ----------
    %(record)s
    %(channels)s
    %(start_s)s
    %(end_s)s
    threshold : float, optional
        Minimum |amplitude| in robust SDs.
    min_width_ms : float, optional
        Minimum width at half prominence in ms.
    max_width_ms : float, optional
        Maximum width at half prominence in ms.
    max_candidates : int, optional
        How many candidates to return at most.
    %(budget_tokens)s

    Returns
    -------
    dict
        ``record``, ``time_range_s``, ``threshold_robust_sd``, ``n_found``, ``n_returned``,
        ``columns`` (["time_s", "channel", "amplitude_uv", "width_ms",
        "steepness_uv_per_ms"]), ``rows``.

    Raises
    ------
    ToolError
        ``bad_argument`` for a non-positive threshold or width, max_width_ms not above
        min_width_ms, or max_candidates not an integer >= 1; ``unknown_channel``,
        ``out_of_range`` (time range), ``budget_exceeded`` (max_candidates rows).
    """
    rec = _open(record)
    threshold = _positive("threshold", threshold)
    min_width_ms = _positive("min_width_ms", min_width_ms, allow_zero=True)
    max_width_ms = _positive("max_width_ms", max_width_ms)
    if not isinstance(max_candidates, int) or isinstance(max_candidates, bool) or max_candidates < 1:
        raise ToolError("bad_argument", f"max_candidates: expected an integer >= 1, got {max_candidates!r}", argument="max_candidates")
    if max_width_ms <= min_width_ms:
        raise ToolError("bad_argument", f"max_width_ms={max_width_ms:g} must exceed min_width_ms={min_width_ms:g}", argument="max_width_ms")
    picks, first, last = _segment(rec, channels, start_s, end_s)
    sample = [SAMPLE_VALUE, _longest(rec, picks), SAMPLE_VALUE, SAMPLE_VALUE, SAMPLE_VALUE]
    check_budget("detect_transients", max_candidates, sample, budget_tokens, f"up to {max_candidates} candidates (max_candidates)")
    x = _uv(rec, picks, first, last)
    ms = rec.sfreq / 1000.0
    found: list[Transient] = []
    for j, ch in enumerate(picks):
        found += _channel_transients(x[j], ms, threshold, min_width_ms, max_width_ms, first / rec.sfreq, rec.sfreq, rec.ch_names[ch])
    found.sort(key=lambda c: -abs(c[2]))
    kept = sorted(found[:max_candidates], key=lambda c: (c[0], c[1]))
    return {
        "record": _name(rec),
        "time_range_s": _span(rec, first, last),
        "threshold_robust_sd": threshold,
        "n_found": len(found),
        "n_returned": len(kept),
        "columns": ["time_s", "channel", "amplitude_uv", "width_ms", "steepness_uv_per_ms"],
        "rows": [[_sig(t, 8), ch, _sig(a), _sig(w), _sig(s)] for t, ch, a, w, s in kept],
    }


def _channel_transients(
    x: FloatArray, per_ms: float, threshold: float, min_w: float, max_w: float, offset_s: float, sfreq: float,
    name: str,
) -> list[Transient]:
    centred = x - np.median(x)
    sigma = 1.4826 * np.median(np.abs(centred))
    if sigma <= 0:
        return []
    slope = np.abs(np.diff(centred)) / (1000.0 / sfreq)  # µV per ms
    out: list[Transient] = []
    for polarity in (1.0, -1.0):
        peaks, props = signal.find_peaks(
            polarity * centred, height=threshold * sigma, width=(max(1.0, min_w * per_ms), max_w * per_ms),
            rel_height=0.5, distance=max(1, int(max_w * per_ms)),
        )
        for p, width in zip(peaks, props["widths"]):
            reach = int(math.ceil(width))
            lo, hi = max(0, p - reach), min(len(slope), p + reach)
            steep = slope[lo:hi].max() if hi > lo else 0.0
            out.append((offset_s + p / sfreq, name, float(centred[p]), float(width / per_ms), float(steep)))
    return out
