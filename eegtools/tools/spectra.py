"""Tools 4-5: the power spectrum and band power."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from eegtools import features as F
from eegtools.budget import DEFAULT_BUDGET_TOKENS, SAMPLE_VALUE, check_budget
from eegtools.errors import ToolError
from eegtools.tools._common import (
    Band,
    NonNegative,
    RecordLike,
    ToolResult,
    _longest,
    _name,
    _open,
    _positive,
    _segment,
    _sig,
    _sig_list,
    _span,
    _uv,
)

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


def resolve_bands(bands: Sequence[Band] | str | None) -> dict[str, tuple[float, float]]:
    """Band name -> (low, high) Hz for named bands or [low, high] pairs (all named bands when None)."""
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
    chosen = resolve_bands(bands)
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
