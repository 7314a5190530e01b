"""Tool 3: signal-quality metrics."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from eegtools import features as F
from eegtools.budget import DEFAULT_BUDGET_TOKENS, SAMPLE_VALUE, check_budget
from eegtools.errors import ToolError
from eegtools.tools._common import (
    NonNegative,
    RecordLike,
    ToolResult,
    _longest,
    _name,
    _open,
    _positive,
    _segment,
    _sig,
    _span,
    _uv,
)

# --- 3: signal quality ----------------------------------------------------------------


def compute_noise_metrics(
    record: RecordLike, channels: Sequence[str] | None = None, start_s: NonNegative | None = None,
    end_s: NonNegative | None = None, *, line_freq: float = 50.0, high_freq_hz: float = 40.0,
    flat_tolerance_uv: NonNegative = 0.01, budget_tokens: int | None = DEFAULT_BUDGET_TOKENS,
) -> ToolResult:
    """Signal-quality metrics: amplitude, flat lines, clipping, line noise and high-frequency noise.

    Per channel: RMS (µV), flat-line ratio (share of successive differences below
    `flat_tolerance_uv`), extrema repetition ratio (share of samples sitting at the channel's
    own minimum or maximum: clipping), power-line noise ratio (power within ±1 Hz of
    `line_freq` over 0.5 Hz..Nyquist) and high-frequency noise ratio (power from
    `high_freq_hz` to Nyquist, line band excluded, over the same total).

    Parameters
    ----------
    %(record)s
    %(channels)s
    %(start_s)s
    %(end_s)s
    line_freq : float, optional
        Power-line frequency in Hz.
    high_freq_hz : float, optional
        Lower edge of the high-frequency noise band in Hz.
    flat_tolerance_uv : float, optional
        Flat-line tolerance in µV.
    %(budget_tokens)s

    Returns
    -------
    dict
        ``record``, ``time_range_s`` ([start, end]), ``line_freq_hz``, ``channels``:
        [{``channel``, ``rms_uv``, ``flat_line_ratio``, ``extrema_repetition_ratio``,
        ``line_noise_ratio``, ``high_freq_noise_ratio``}]; None where a ratio is undefined.

    Raises
    ------
    ToolError
        ``bad_argument`` for a non-positive frequency or a negative tolerance;
        ``unsupported`` when the line band lies above the Nyquist frequency;
        ``unknown_channel``, ``out_of_range`` (time range), ``budget_exceeded``.
    """
    rec = _open(record)
    line_freq = _positive("line_freq", line_freq)
    high_freq_hz = _positive("high_freq_hz", high_freq_hz)
    flat_tolerance_uv = _positive("flat_tolerance_uv", flat_tolerance_uv, allow_zero=True)
    picks, first, last = _segment(rec, channels, start_s, end_s)
    nyquist = rec.sfreq / 2
    if line_freq - 1 >= nyquist:  # at 100 Hz sampling, 50 Hz still has bins from 49 Hz up
        raise ToolError("unsupported", f"line_freq={line_freq:g} Hz: its band (±1 Hz) lies above the Nyquist frequency {nyquist:g} Hz", argument="line_freq")
    sample: dict[object, object] = {"channel": _longest(rec, picks), **{k: SAMPLE_VALUE for k in range(5)}}
    check_budget("compute_noise_metrics", len(picks), sample, budget_tokens, f"{len(picks)} channels")
    x = _uv(rec, picks, first, last)
    diffs = np.abs(np.diff(x, axis=-1))
    flat = (diffs <= flat_tolerance_uv).mean(axis=-1)
    lo, hi = x.min(axis=-1, keepdims=True), x.max(axis=-1, keepdims=True)
    extrema = ((np.abs(x - lo) <= flat_tolerance_uv) | (np.abs(x - hi) <= flat_tolerance_uv)).mean(axis=-1)
    freqs, psd = F.welch_psd(x, rec.sfreq)
    total = F.band_power(freqs, psd, 0.5, nyquist + 1e-9)
    line = F.band_power(freqs, psd, line_freq - 1, line_freq + 1 + 1e-9)
    hf_mask = (freqs >= high_freq_hz) & ~((freqs >= line_freq - 1) & (freqs <= line_freq + 1))
    df = freqs[1] - freqs[0]
    high = psd[..., hf_mask].sum(axis=-1) * df if high_freq_hz < nyquist else np.full(len(picks), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        line_ratio, high_ratio = line / total, high / total
    rows = []
    for j, ch in enumerate(picks):
        rows.append({
            "channel": rec.ch_names[ch],
            "rms_uv": _sig(F.rms(x[j])),
            "flat_line_ratio": _sig(flat[j]),
            "extrema_repetition_ratio": _sig(extrema[j]),
            "line_noise_ratio": _sig(line_ratio[j]),
            "high_freq_noise_ratio": _sig(high_ratio[j]),
        })
    return {"record": _name(rec), "time_range_s": _span(rec, first, last), "line_freq_hz": line_freq, "channels": rows}
