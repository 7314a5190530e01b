"""The ten deterministic EEG tools (EEGAgentBench §3.2). No classifiers, no labels.

Every tool takes `record` (a file path or a loaded Recording) and keyword arguments, checks
them, checks the output budget from the arguments alone, and only then computes. Results
are plain JSON-serialisable dicts; amplitudes are in µV, times in seconds from the start.
Refusals raise ToolError (see eegtools.errors).

Each tool's signature and numpydoc docstring are the single source of its function-calling
schema (eegtools.schema): annotations give the JSON types (``Literal`` for enumerations,
``Annotated[..., Minimum(x)]`` for bounds), the ``Parameters`` section the descriptions, and
the signature the defaults. A parameter with a default is typed ``..., optional`` in its
docstring and does not repeat the value there.
"""
from __future__ import annotations

import math
import os
import re
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, SupportsFloat, TypeAlias, cast, get_args

import numpy as np
from numpy.typing import ArrayLike
from scipy import signal

from eegtools import features as F
from eegtools.budget import DEFAULT_BUDGET_TOKENS, SAMPLE_VALUE, check_budget
from eegtools.errors import ToolError
from eegtools.recording import Recording, load_recording, resolve_channels, resolve_span
from eegtools.schema import Minimum

RecordLike: TypeAlias = str | os.PathLike[str] | Recording
"""What every tool's `record` accepts: a file path, or a Recording from load_recording."""
ToolResult: TypeAlias = dict[str, Any]
"""A tool's JSON-serialisable result."""
NonNegative: TypeAlias = Annotated[float, Minimum(0)]
"""A number >= 0 (seconds, Hz, µV, ms); the bound is part of the tool's JSON schema."""
Count: TypeAlias = Annotated[int, Minimum(1)]
"""An integer >= 1; the bound is part of the tool's JSON schema."""
BandName: TypeAlias = Literal["delta", "theta", "alpha", "sigma", "beta", "gamma"]
"""The named frequency bands (eegtools.features.BANDS gives their edges)."""
Band: TypeAlias = BandName | Sequence[float]
"""A band by name, or as [low_hz, high_hz]."""
WindowFeature: TypeAlias = Literal[
    "rms_uv", "ptp_uv", "line_length_uv_per_s", "zero_crossing_rate_hz",
    "hjorth_activity_uv2", "hjorth_mobility_hz", "hjorth_complexity",
    "alpha_power", "alpha_relative", "beta_power", "beta_relative", "delta_power", "delta_relative",
    "gamma_power", "gamma_relative", "peak_frequency_hz", "sigma_power", "sigma_relative",
    "theta_power", "theta_relative",
]
"""The features compute_windowed_features computes: time-domain ones, then spectral ones sorted."""
CorrelationMethod: TypeAlias = Literal["pearson"]
"""The correlation methods compute_channel_correlation offers."""
FloatArray: TypeAlias = F.FloatArray
Transient: TypeAlias = tuple[float, str, float, float, float]  # time_s, channel, amplitude, width_ms, steepness

UV = 1e6
CHUNK_SAMPLES = 4_000_000  # windows are processed in chunks of about this many samples
SPECTRAL_FEATURES = {f"{b}_power" for b in F.BANDS} | {f"{b}_relative" for b in F.BANDS} | {"peak_frequency_hz"}
TIME_FEATURES = (
    "rms_uv", "ptp_uv", "line_length_uv_per_s", "zero_crossing_rate_hz",
    "hjorth_activity_uv2", "hjorth_mobility_hz", "hjorth_complexity",
)
WINDOW_FEATURES: tuple[WindowFeature, ...] = get_args(WindowFeature)  # = TIME_FEATURES + sorted(SPECTRAL_FEATURES)
DEFAULT_WINDOW_FEATURES: tuple[WindowFeature, ...] = (
    "rms_uv", "delta_relative", "theta_relative", "alpha_relative", "beta_relative",
)


def _sig(value: SupportsFloat, digits: int = 4) -> float | None:
    """A float rounded to `digits` significant digits; None for NaN/inf (JSON has neither)."""
    value = float(value)
    if not math.isfinite(value):
        return None
    return float(f"{value:.{digits}g}")


def _sig_list(values: ArrayLike, digits: int = 4) -> list[float | None]:
    return [_sig(v, digits) for v in np.asarray(values).ravel()]


def _open(record: RecordLike) -> Recording:
    return record if isinstance(record, Recording) else load_recording(record)


def _name(rec: Recording) -> str:
    return Path(rec.path).name


def _segment(
    rec: Recording, channels: Sequence[str] | None, start_s: float | None, end_s: float | None,
) -> tuple[list[int], int, int]:
    picks = resolve_channels(rec, channels)
    first, last = resolve_span(rec, start_s, end_s)
    return picks, first, last


def _uv(rec: Recording, picks: list[int], first: int, last: int) -> FloatArray:
    return rec.data[picks, first:last] * UV


def _longest(rec: Recording, picks: list[int]) -> str:
    return max((rec.ch_names[i] for i in picks), key=len, default="")


def _span(rec: Recording, first: int, last: int) -> list[float | None]:
    return [_sig(first / rec.sfreq, 8), _sig(last / rec.sfreq, 8)]


def _positive(name: str, value: object, *, allow_zero: bool = False) -> float:
    if value is None or not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise ToolError("bad_argument", f"{name}: expected a number, got {value!r}", argument=name)
    if value < 0 or (value == 0 and not allow_zero):
        raise ToolError("bad_argument", f"{name}: must be {'>= 0' if allow_zero else '> 0'}, got {value!r}", argument=name)
    return float(value)


# --- 1-2: metadata ----------------------------------------------------------------------


def get_recording_info(record: RecordLike, *, budget_tokens: int | None = DEFAULT_BUDGET_TOKENS) -> ToolResult:
    """Sampling rate, duration, sample and channel counts, channel types, annotations.

    Parameters
    ----------
    %(record)s
    budget_tokens : int or None, optional
        Accepted for a uniform interface; this result is small and never refused.

    Returns
    -------
    dict
        ``record`` (file name), ``sampling_rate_hz``, ``duration_s``, ``n_samples``,
        ``n_channels``, ``channel_types`` ({type: count}), ``meas_date`` (ISO 8601 or None),
        ``n_annotations``.

    Raises
    ------
    ToolError
        ``bad_argument`` when the file cannot be read, ``unsupported`` when its format is not.
    """
    rec = _open(record)
    types: dict[str, int] = {}
    for t in rec.ch_types:
        types[t] = types.get(t, 0) + 1
    return {
        "record": _name(rec),
        "sampling_rate_hz": rec.sfreq,
        "duration_s": _sig(rec.duration_s, 8),
        "n_samples": rec.n_samples,
        "n_channels": len(rec.ch_names),
        "channel_types": types,
        "meas_date": rec.meas_date,
        "n_annotations": rec.n_annotations,
    }


_DIGITS = re.compile(r"\d+")


_ELECTRODE = re.compile(r"^(fp|af|f|ft|fc|t|tp|c|cp|p|po|o|a|m|i|n)(\d+|z)$", re.IGNORECASE)


def hemisphere(name: str) -> str:
    """10-20 convention: odd numbers left, even right, 'z' midline. The last word counts
    ("EEG F3" -> F3); a bipolar derivation's electrodes must agree; else "unknown"."""
    words = name.strip(" .").split()
    if not words:
        return "unknown"
    sides = set()
    for part in words[-1].split("-"):
        match = _ELECTRODE.match(part.strip("."))
        if match is None:
            return "unknown"
        label = match.group(2)
        sides.add("midline" if label.lower() == "z" else ("left" if int(label) % 2 else "right"))
    return sides.pop() if len(sides) == 1 else "unknown"


def get_channel_list(record: RecordLike, *, budget_tokens: int | None = DEFAULT_BUDGET_TOKENS) -> ToolResult:
    """Channel names, types (as the file declares them) and hemisphere by the 10-20 rule.

    Parameters
    ----------
    %(record)s
    %(budget_tokens)s

    Returns
    -------
    dict
        ``record``, ``n_channels``, ``channels``: [{``name``, ``type``, ``hemisphere``}] with
        hemisphere one of left, right, midline, unknown.

    Raises
    ------
    ToolError
        ``budget_exceeded`` for a channel list over the budget; ``bad_argument`` or
        ``unsupported`` when the file cannot be read.
    """
    rec = _open(record)
    sample = {"name": _longest(rec, list(range(len(rec.ch_names)))), "type": "misc", "hemisphere": "midline"}
    check_budget("get_channel_list", len(rec.ch_names), sample, budget_tokens, f"{len(rec.ch_names)} channels")
    return {
        "record": _name(rec),
        "n_channels": len(rec.ch_names),
        "channels": [
            {"name": n, "type": t, "hemisphere": hemisphere(n)} for n, t in zip(rec.ch_names, rec.ch_types)
        ],
    }


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


# --- 4-5: spectra ---------------------------------------------------------------------


def compute_power_spectrum(
    record: RecordLike, channels: Sequence[str] | None = None, start_s: NonNegative | None = None,
    end_s: NonNegative | None = None, *, fmin: NonNegative = 0.5, fmax: NonNegative = 45.0,
    segment_s: float = F.WELCH_SEGMENT_S, budget_tokens: int | None = DEFAULT_BUDGET_TOKENS,
) -> ToolResult:
    """Power spectral density of each channel, with its peak frequency.

    Welch power spectral density (µV²/Hz, Hann, `segment_s` segments, 50% overlap) on
    fmin..fmax, with each channel's peak frequency in that range.

    Parameters
    ----------
    %(record)s
    %(channels)s
    %(start_s)s
    %(end_s)s
    fmin : float, optional
        Lowest frequency in Hz.
    fmax : float, optional
        Highest frequency in Hz.
    segment_s : float, optional
        Welch segment length in s; the frequency resolution is 1 / segment_s Hz.
    %(budget_tokens)s

    Returns
    -------
    dict
        ``record``, ``time_range_s``, ``frequency_resolution_hz``, ``frequencies_hz`` (the
        bins in fmin..fmax), ``channels``: [{``channel``, ``peak_frequency_hz``,
        ``psd_uv2_per_hz`` (one value per bin)}].

    Raises
    ------
    ToolError
        ``bad_argument`` for a negative or inverted frequency range or a non-positive
        segment; ``out_of_range`` when fmin is at or above the Nyquist frequency, or for the
        time range; ``unknown_channel``, ``budget_exceeded``.
    """
    rec = _open(record)
    fmin = _positive("fmin", fmin, allow_zero=True)
    fmax = _positive("fmax", fmax)
    segment_s = _positive("segment_s", segment_s)
    if fmax <= fmin:
        raise ToolError("bad_argument", f"fmax={fmax:g} must be greater than fmin={fmin:g}", argument="fmax")
    if fmin >= rec.sfreq / 2:
        raise ToolError("out_of_range", f"fmin={fmin:g} Hz is at or above the Nyquist frequency {rec.sfreq / 2:g} Hz", argument="fmin")
    picks, first, last = _segment(rec, channels, start_s, end_s)
    nperseg = int(min(last - first, max(8, round(segment_s * rec.sfreq))))
    step = rec.sfreq / nperseg
    n_freqs = int(np.floor(min(fmax, rec.sfreq / 2) / step) - np.ceil(fmin / step) + 1)
    check_budget("compute_power_spectrum", len(picks) * n_freqs, SAMPLE_VALUE, budget_tokens,
                 f"{len(picks)} channels x {n_freqs} frequencies")
    x = _uv(rec, picks, first, last)
    freqs, psd = F.welch_psd(x, rec.sfreq, segment_s)
    mask = (freqs >= fmin) & (freqs <= fmax)
    peaks = F.peak_frequency(freqs, psd, fmin, fmax)
    return {
        "record": _name(rec),
        "time_range_s": _span(rec, first, last),
        "frequency_resolution_hz": _sig(freqs[1] - freqs[0]),
        "frequencies_hz": _sig_list(freqs[mask], 6),
        "channels": [
            {"channel": rec.ch_names[ch], "peak_frequency_hz": _sig(peaks[j]), "psd_uv2_per_hz": _sig_list(psd[j, mask])}
            for j, ch in enumerate(picks)
        ],
    }


def _bands(bands: Sequence[Band] | str | None) -> dict[str, tuple[float, float]]:
    if bands is None:
        return dict(F.BANDS)
    items: Sequence[Band | str] = [bands] if isinstance(bands, str) else bands
    chosen: dict[str, tuple[float, float]] = {}
    for band in items:
        if isinstance(band, str):
            if band not in F.BANDS:
                raise ToolError("unsupported", f"bands: unknown band {band!r}; known: {', '.join(F.BANDS)} (or [low, high] in Hz)", argument="bands")
            chosen[band] = F.BANDS[band]
        elif isinstance(band, (list, tuple)) and len(band) == 2 and all(isinstance(v, (int, float)) for v in band) and 0 <= band[0] < band[1]:
            chosen[f"{band[0]:g}-{band[1]:g}Hz"] = (float(band[0]), float(band[1]))
        else:
            raise ToolError("bad_argument", f"bands: {band!r} is neither a band name nor [low, high] with low < high", argument="bands")
    return chosen


def compute_band_power(
    record: RecordLike, channels: Sequence[str] | None = None, start_s: NonNegative | None = None,
    end_s: NonNegative | None = None, *, bands: Sequence[Band] | None = None,
    budget_tokens: int | None = DEFAULT_BUDGET_TOKENS,
) -> ToolResult:
    """Absolute (µV²) and relative band power from the Welch PSD (2-s Hann segments).

    Bands: names (delta 0.5-4, theta 4-8, alpha 8-13, sigma 12-15, beta 13-30, gamma 30-45 Hz)
    or [low, high] in Hz (low <= f < high); relative = band / power in 0.5-45 Hz.

    Parameters
    ----------
    %(record)s
    %(channels)s
    %(start_s)s
    %(end_s)s
    bands : sequence of (str or [float, float]), optional
        Band names (delta, theta, alpha, sigma, beta, gamma) or [low_hz, high_hz] pairs; omit
        for all named bands.
    %(budget_tokens)s

    Returns
    -------
    dict
        ``record``, ``time_range_s``, ``bands_hz`` ({label: [low, high]}), ``channels``:
        [{``channel``, ``<label>_power_uv2``, ``<label>_relative``, ...}] with label a band
        name or ``<low>-<high>Hz``.

    Raises
    ------
    ToolError
        ``unsupported`` for an unknown band name or a band starting at or above the Nyquist
        frequency; ``bad_argument`` for a malformed [low, high]; ``unknown_channel``,
        ``out_of_range`` (time range), ``budget_exceeded``.
    """
    rec = _open(record)
    chosen = _bands(bands)
    picks, first, last = _segment(rec, channels, start_s, end_s)
    nyquist = rec.sfreq / 2
    for label, (low, _) in chosen.items():
        if low >= nyquist:
            raise ToolError("unsupported", f"bands: {label} starts at or above the Nyquist frequency {nyquist:g} Hz", argument="bands")
    sample = [_longest(rec, picks), "gamma", SAMPLE_VALUE, SAMPLE_VALUE]
    check_budget("compute_band_power", len(picks) * len(chosen), sample, budget_tokens, f"{len(picks)} channels x {len(chosen)} bands")
    x = _uv(rec, picks, first, last)
    freqs, psd = F.welch_psd(x, rec.sfreq)
    total = F.band_power(freqs, psd, *F.total_band(rec.sfreq))
    out = []
    for j, ch in enumerate(picks):
        row: dict[str, str | float | None] = {"channel": rec.ch_names[ch]}
        for label, (low, high) in chosen.items():
            power = F.band_power(freqs, psd[j], low, min(high, nyquist + 1e-9))
            row[f"{label}_power_uv2"] = _sig(power)
            row[f"{label}_relative"] = _sig(power / total[j]) if total[j] > 0 else None
        out.append(row)
    return {
        "record": _name(rec),
        "time_range_s": _span(rec, first, last),
        "bands_hz": {k: list(v) for k, v in chosen.items()},
        "channels": out,
    }


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


# --- 9-10: cross-channel ----------------------------------------------------------------


def _mirror(name: str) -> str:
    """The homologous 10-20 name: each odd number n becomes n+1 (left -> right)."""
    return _DIGITS.sub(lambda m: str(int(m.group()) + 1) if int(m.group()) % 2 else m.group(), name)


def homologous_pairs(rec: Recording) -> list[tuple[int, int]]:
    """(left, right) channel pairs found by the 10-20 numbering (F3/F4, FP1-F7/FP2-F8, ...)."""
    index = {re.sub(r"[^0-9a-z\-]+", "", n.casefold()): i for i, n in enumerate(rec.ch_names)}
    pairs = []
    for i, n in enumerate(rec.ch_names):
        if hemisphere(n) != "left":
            continue
        j = index.get(re.sub(r"[^0-9a-z\-]+", "", _mirror(n).casefold()))
        if j is not None and hemisphere(rec.ch_names[j]) == "right":
            pairs.append((i, j))
    return pairs


def compute_asymmetry(
    record: RecordLike, pairs: list[Sequence[str]] | None = None, start_s: NonNegative | None = None,
    end_s: NonNegative | None = None, *, bands: Sequence[Band] = ("alpha",),
    budget_tokens: int | None = DEFAULT_BUDGET_TOKENS,
) -> ToolResult:
    """Left-right band-power asymmetry per homologous channel pair.

    asymmetry_index = (R - L) / (R + L) and log_ratio = ln R - ln L. `pairs`:
    [[left, right], ...]; default all 10-20 pairs.

    Parameters
    ----------
    %(record)s
    pairs : list of [str, str], optional
        [[left, right], ...] channel pairs (default: all 10-20 homologous pairs).
    %(start_s)s
    %(end_s)s
    bands : sequence of (str or [float, float]), optional
        Band names (delta, theta, alpha, sigma, beta, gamma) or [low_hz, high_hz] pairs.
    %(budget_tokens)s

    Returns
    -------
    dict
        ``record``, ``time_range_s``, ``pairs``: [{``left``, ``right``, ``band``,
        ``left_power_uv2``, ``right_power_uv2``, ``asymmetry_index``, ``log_ratio``}], one
        per pair and band.

    Raises
    ------
    ToolError
        ``unsupported`` when no 10-20 pairs are found or for an unknown band name;
        ``bad_argument`` for malformed pairs or bands; ``unknown_channel``,
        ``out_of_range`` (time range), ``budget_exceeded``.
    """
    rec = _open(record)
    chosen = _bands(list(bands) if isinstance(bands, (list, tuple)) else bands)
    if pairs is None:
        index_pairs = homologous_pairs(rec)
        if not index_pairs:
            raise ToolError("unsupported", "pairs: no homologous 10-20 pairs found in the channel names; give pairs explicitly", argument="pairs")
    else:
        if not isinstance(pairs, list) or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs) or not pairs:
            raise ToolError("bad_argument", "pairs: expected a list of [left, right] channel-name pairs", argument="pairs")
        index_pairs = [(resolve_channels(rec, [str(p[0])])[0], resolve_channels(rec, [str(p[1])])[0]) for p in pairs]
    first, last = resolve_span(rec, start_s, end_s)
    sample = [_longest(rec, [p[0] for p in index_pairs]) * 2, "gamma", SAMPLE_VALUE, SAMPLE_VALUE, SAMPLE_VALUE, SAMPLE_VALUE]
    check_budget("compute_asymmetry", len(index_pairs) * len(chosen), sample, budget_tokens, f"{len(index_pairs)} pairs x {len(chosen)} bands")
    picks = sorted({i for p in index_pairs for i in p})
    position = {ch: k for k, ch in enumerate(picks)}
    freqs, psd = F.welch_psd(_uv(rec, picks, first, last), rec.sfreq)
    rows = []
    for left, right in index_pairs:
        for label, (low, high) in chosen.items():
            pl = F.band_power(freqs, psd[position[left]], low, high)
            pr = F.band_power(freqs, psd[position[right]], low, high)
            with np.errstate(divide="ignore", invalid="ignore"):
                index = (pr - pl) / (pr + pl)
                log_ratio = np.log(pr) - np.log(pl)
            rows.append({
                "left": rec.ch_names[left], "right": rec.ch_names[right], "band": label,
                "left_power_uv2": _sig(pl), "right_power_uv2": _sig(pr),
                "asymmetry_index": _sig(index), "log_ratio": _sig(log_ratio),
            })
    return {"record": _name(rec), "time_range_s": _span(rec, first, last), "pairs": rows}


def compute_channel_correlation(
    record: RecordLike, channels: Sequence[str] | None = None, start_s: NonNegative | None = None,
    end_s: NonNegative | None = None, *, method: CorrelationMethod = "pearson",
    budget_tokens: int | None = DEFAULT_BUDGET_TOKENS,
) -> ToolResult:
    """Pearson (zero-lag) correlation matrix between channels over a time range.

    Parameters
    ----------
    %(record)s
    %(channels)s
    %(start_s)s
    %(end_s)s
    method : {'pearson'}, optional
        Correlation method.
    %(budget_tokens)s

    Returns
    -------
    dict
        ``record``, ``time_range_s``, ``method``, ``channels`` (names), ``matrix`` (rows in
        channel order; None where a channel is constant).

    Raises
    ------
    ToolError
        ``unsupported`` for a method other than pearson; ``bad_argument`` for fewer than 2
        channels; ``unknown_channel``, ``out_of_range`` (time range), ``budget_exceeded``.
    """
    rec = _open(record)
    if method != "pearson":
        raise ToolError("unsupported", f"method: {method!r} is not supported (only 'pearson')", argument="method")
    picks, first, last = _segment(rec, channels, start_s, end_s)
    if len(picks) < 2:
        raise ToolError("bad_argument", "channels: correlation needs at least 2 channels", argument="channels")
    check_budget("compute_channel_correlation", len(picks) ** 2, SAMPLE_VALUE, budget_tokens, f"{len(picks)} x {len(picks)} matrix")
    x = _uv(rec, picks, first, last)
    with np.errstate(divide="ignore", invalid="ignore"):
        matrix = cast(FloatArray, np.corrcoef(x))  # 2-D: at least 2 channels
    return {
        "record": _name(rec),
        "time_range_s": _span(rec, first, last),
        "method": method,
        "channels": [rec.ch_names[i] for i in picks],
        "matrix": [_sig_list(row, 3) for row in matrix],
    }
