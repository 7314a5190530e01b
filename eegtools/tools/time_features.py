"""Tools 6-7: time-domain features, and features in sliding windows."""
from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from eegtools import features as F
from eegtools.budget import DEFAULT_BUDGET_TOKENS, SAMPLE_VALUE, check_budget
from eegtools.errors import ToolError
from eegtools.tools._common import (
    CHUNK_SAMPLES,
    DEFAULT_WINDOW_FEATURES,
    SPECTRAL_FEATURES,
    TIME_FEATURES,
    UV,
    WINDOW_FEATURES,
    FloatArray,
    NonNegative,
    RecordLike,
    ToolResult,
    WindowFeature,
    _longest,
    _name,
    _open,
    _positive,
    _segment,
    _sig,
    _span,
    _uv,
)

# --- 6: time-domain features ----------------------------------------------------------


def _time_features(
    x: FloatArray, sfreq: float, wanted: Collection[str] = TIME_FEATURES, scale: float = 1.0,
) -> dict[str, FloatArray]:
    """The wanted time-domain features; `scale` converts x's units to µV (1e6 for volts)."""
    out: dict[str, FloatArray] = {}
    if "rms_uv" in wanted:
        out["rms_uv"] = F.rms(x) * scale
    if "ptp_uv" in wanted:
        out["ptp_uv"] = F.peak_to_peak(x) * scale
    if "line_length_uv_per_s" in wanted:
        out["line_length_uv_per_s"] = F.line_length(x, sfreq) * scale
    if "zero_crossing_rate_hz" in wanted:
        out["zero_crossing_rate_hz"] = F.zero_crossing_rate(x, sfreq)
    if any(f.startswith("hjorth_") for f in wanted):
        activity, mobility, complexity = F.hjorth(x, sfreq)
        out.update({"hjorth_activity_uv2": activity * scale**2, "hjorth_mobility_hz": mobility, "hjorth_complexity": complexity})
    return out


def compute_time_features(
    record: RecordLike, channels: Sequence[str] | None = None, start_s: NonNegative | None = None,
    end_s: NonNegative | None = None, *, budget_tokens: int | None = DEFAULT_BUDGET_TOKENS,
) -> ToolResult:
    """Time-domain features of each channel: amplitude, line length, zero crossings, Hjorth.

    Per channel: RMS and peak-to-peak (µV), line length (µV/s), zero-crossing rate (Hz),
    Hjorth activity (µV²), mobility (Hz) and complexity.

    Parameters
    ----------
    %(record)s
    %(channels)s
    %(start_s)s
    %(end_s)s
    %(budget_tokens)s

    Returns
    -------
    dict
        ``record``, ``time_range_s``, ``channels``: [{``channel``, ``rms_uv``, ``ptp_uv``,
        ``line_length_uv_per_s``, ``zero_crossing_rate_hz``, ``hjorth_activity_uv2``,
        ``hjorth_mobility_hz``, ``hjorth_complexity``}].

    Raises
    ------
    ToolError
        ``unknown_channel``, ``out_of_range`` (time range), ``budget_exceeded``.
    """
    rec = _open(record)
    picks, first, last = _segment(rec, channels, start_s, end_s)
    sample = {"channel": _longest(rec, picks), **{k: SAMPLE_VALUE for k in TIME_FEATURES}}
    check_budget("compute_time_features", len(picks), sample, budget_tokens, f"{len(picks)} channels")
    values = _time_features(_uv(rec, picks, first, last), rec.sfreq)
    rows = [{"channel": rec.ch_names[ch], **{k: _sig(v[j]) for k, v in values.items()}} for j, ch in enumerate(picks)]
    return {"record": _name(rec), "time_range_s": _span(rec, first, last), "channels": rows}


# --- 7: windowed features -------------------------------------------------------------


def _window_features(features: Sequence[str] | None) -> list[str]:
    if features is None:
        return list(DEFAULT_WINDOW_FEATURES)
    if isinstance(features, str):
        features = [features]
    if not features:
        raise ToolError("bad_argument", "features: give at least one feature name", argument="features")
    unknown = [f for f in features if f not in WINDOW_FEATURES]
    if unknown:
        raise ToolError("unsupported", f"features: {unknown} not available; choose from {', '.join(WINDOW_FEATURES)}", argument="features")
    return list(dict.fromkeys(features))


def _chunk_features(chunk: FloatArray, sfreq: float, wanted: list[str]) -> dict[str, FloatArray]:
    """Features of a (channels, windows, samples) block in volts (a strided view: scaling the
    results instead of the block avoids a copy); spectral ones share one Welch call."""
    out = _time_features(chunk, sfreq, wanted, scale=UV) if any(f in TIME_FEATURES for f in wanted) else {}
    if any(f in SPECTRAL_FEATURES for f in wanted):
        freqs, psd = F.welch_psd(chunk, sfreq)
        psd *= UV**2
        total = F.band_power(freqs, psd, *F.total_band(sfreq))
        for band, (low, high) in F.BANDS.items():
            if f"{band}_power" in wanted or f"{band}_relative" in wanted:
                power = F.band_power(freqs, psd, low, high)
                out[f"{band}_power"] = power
                with np.errstate(divide="ignore", invalid="ignore"):
                    out[f"{band}_relative"] = power / total
        if "peak_frequency_hz" in wanted:
            out["peak_frequency_hz"] = F.peak_frequency(freqs, psd, *F.total_band(sfreq))
    return {k: v for k, v in out.items() if k in wanted}


def compute_windowed_features(
    record: RecordLike, channels: Sequence[str] | None = None, start_s: NonNegative | None = None,
    end_s: NonNegative | None = None, *, window_s: float = 30.0, step_s: float | None = None,
    features: Sequence[WindowFeature] | None = DEFAULT_WINDOW_FEATURES,
    budget_tokens: int | None = DEFAULT_BUDGET_TOKENS,
) -> ToolResult:
    """Features in sliding windows over a time range.

    One row per window and channel: [t_start_s, channel, feature values...]. `step_s`
    defaults to `window_s` (no overlap). Features: rms_uv, ptp_uv, line_length_uv_per_s,
    zero_crossing_rate_hz, hjorth_*, <band>_power (µV²), <band>_relative, peak_frequency_hz.

    Parameters
    ----------
    %(record)s
    %(channels)s
    %(start_s)s
    %(end_s)s
    window_s : float, optional
        Window length in s.
    step_s : float, optional
        Step between window starts in s (default: window_s).
    features : sequence of str, optional
        Features per window.
    %(budget_tokens)s

    Returns
    -------
    dict
        ``record``, ``time_range_s``, ``window_s``, ``step_s``, ``n_windows``,
        ``features_computed``, ``columns`` (["t_start_s", "channel", features...]), ``rows``.

    Raises
    ------
    ToolError
        ``unsupported`` for an unknown feature; ``bad_argument`` for an empty feature list, a
        non-positive window or step, or a window under 4 samples; ``out_of_range`` for a
        window longer than the time range, or for the time range; ``unknown_channel``,
        ``budget_exceeded`` (windows x channels rows).
    """
    rec = _open(record)
    wanted = _window_features(features)
    window_s = _positive("window_s", window_s)
    step_s = window_s if step_s is None else _positive("step_s", step_s)
    picks, first, last = _segment(rec, channels, start_s, end_s)
    win = int(round(window_s * rec.sfreq))
    step = max(1, int(round(step_s * rec.sfreq)))
    if win < 4:
        raise ToolError("bad_argument", f"window_s={window_s:g} holds fewer than 4 samples at {rec.sfreq:g} Hz", argument="window_s")
    if win > last - first:
        raise ToolError("out_of_range", f"window_s={window_s:g} is longer than the time range ({(last - first) / rec.sfreq:g} s)", argument="window_s")
    n_windows = (last - first - win) // step + 1
    sample = [SAMPLE_VALUE, _longest(rec, picks)] + [SAMPLE_VALUE] * len(wanted)
    check_budget("compute_windowed_features", n_windows * len(picks), sample, budget_tokens,
                 f"{len(picks)} channels x {n_windows} windows")
    x = rec.data[picks, first:first + (n_windows - 1) * step + win]
    values = {f: np.empty((len(picks), n_windows)) for f in wanted}
    per_chunk = max(1, CHUNK_SAMPLES // max(1, win * len(picks)))
    for begin in range(0, n_windows, per_chunk):
        stop = min(n_windows, begin + per_chunk)
        block = x[:, begin * step: (stop - 1) * step + win]
        for name, value in _chunk_features(F.windows(block, win, step), rec.sfreq, wanted).items():
            values[name][:, begin:stop] = value
    starts = (first + np.arange(n_windows) * step) / rec.sfreq
    rows = []
    for w in range(n_windows):
        for j, ch in enumerate(picks):
            rows.append([_sig(starts[w], 8), rec.ch_names[ch]] + [_sig(values[f][j, w]) for f in wanted])
    return {
        "record": _name(rec),
        "time_range_s": _span(rec, first, last),
        "window_s": window_s,
        "step_s": step_s,
        "n_windows": n_windows,
        "features_computed": wanted,
        "columns": ["t_start_s", "channel"] + wanted,
        "rows": rows,
    }
