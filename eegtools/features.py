"""Numeric features over the last axis of an array (µV), vectorised: a whole set of windows
is one call. Plain functions, no I/O, no argument checking (the tools do that)."""
from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray
from scipy import fft as sp_fft
from scipy import signal

FloatArray: TypeAlias = NDArray[np.floating[Any]]  # float64, or float32 inside welch_psd

BANDS: dict[str, tuple[float, float]] = {
    "delta": (0.5, 4.0),
    "theta": (4.0, 8.0),
    "alpha": (8.0, 13.0),
    "sigma": (12.0, 15.0),
    "beta": (13.0, 30.0),
    "gamma": (30.0, 45.0),
}
TOTAL_BAND = (0.5, 45.0)  # denominator of relative band power (capped at Nyquist)
WELCH_SEGMENT_S = 2.0


def rms(x: FloatArray) -> FloatArray:
    """Root mean square after removing each segment's mean."""
    out: FloatArray = np.std(x, axis=-1)
    return out


def peak_to_peak(x: FloatArray) -> FloatArray:
    """Largest minus smallest value."""
    out: FloatArray = np.ptp(x, axis=-1)
    return out


def line_length(x: FloatArray, sfreq: float) -> FloatArray:
    """Summed absolute sample-to-sample change per second of signal (µV/s)."""
    out: FloatArray = np.abs(np.diff(x, axis=-1)).sum(axis=-1) * sfreq / x.shape[-1]
    return out


def zero_crossing_rate(x: FloatArray, sfreq: float) -> FloatArray:
    """Sign changes of the mean-removed signal per second (Hz)."""
    centred = x - x.mean(axis=-1, keepdims=True)
    signs = np.signbit(centred)
    out: FloatArray = (signs[..., 1:] != signs[..., :-1]).sum(axis=-1) * sfreq / x.shape[-1]
    return out


def hjorth(x: FloatArray, sfreq: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Activity (variance, µV²), mobility expressed in Hz (sqrt(var(x')/var(x)) / 2π with the
    derivative per second), and complexity (mobility of x' over mobility of x, unitless)."""
    dx = np.diff(x, axis=-1) * sfreq
    ddx = np.diff(dx, axis=-1) * sfreq
    var_x, var_dx, var_ddx = (np.var(a, axis=-1) for a in (x, dx, ddx))
    with np.errstate(divide="ignore", invalid="ignore"):
        mobility = np.sqrt(var_dx / var_x)
        complexity = np.sqrt(var_ddx / var_dx) / mobility
    return var_x, mobility / (2 * np.pi), complexity


def welch_psd(x: FloatArray, sfreq: float, segment_s: float = WELCH_SEGMENT_S) -> tuple[FloatArray, FloatArray]:
    """Welch PSD (density, input units²/Hz) over the last axis: Hann window, `segment_s`
    segments (the whole span when shorter), 50% overlap, constant detrend, one-sided.
    The same estimate as scipy.signal.welch with those settings, computed on strided views
    in float32 (4 significant digits are reported) so a whole night of windows is one FFT."""
    n = x.shape[-1]
    nperseg = int(min(n, max(8, round(segment_s * sfreq))))
    hop = max(1, nperseg - nperseg // 2)
    segments = np.lib.stride_tricks.sliding_window_view(x, nperseg, axis=-1)[..., ::hop, :]
    window = signal.get_window("hann", nperseg).astype(np.float32)
    block = segments.astype(np.float32)
    block -= block.mean(axis=-1, keepdims=True)
    block *= window
    spectrum = sp_fft.rfft(block, axis=-1)
    power = spectrum.real**2 + spectrum.imag**2
    psd: FloatArray = power.mean(axis=-2, dtype=np.float64) / (sfreq * float((window.astype(np.float64) ** 2).sum()))
    if nperseg % 2:
        psd[..., 1:] *= 2
    else:
        psd[..., 1:-1] *= 2
    freqs: FloatArray = np.fft.rfftfreq(nperseg, 1.0 / sfreq)
    return freqs, psd


def band_power(freqs: FloatArray, psd: FloatArray, low: float, high: float) -> FloatArray:
    """Integrated power (µV²) of bins with low <= f < high; NaN when no bin falls inside."""
    mask = (freqs >= low) & (freqs < high)
    if not mask.any():
        return np.full(psd.shape[:-1], np.nan)
    df = freqs[1] - freqs[0] if len(freqs) > 1 else 1.0
    out: FloatArray = psd[..., mask].sum(axis=-1) * df
    return out


def total_band(sfreq: float) -> tuple[float, float]:
    """The denominator band of relative power: TOTAL_BAND capped at the Nyquist frequency."""
    return TOTAL_BAND[0], min(TOTAL_BAND[1], sfreq / 2)


def peak_frequency(freqs: FloatArray, psd: FloatArray, low: float, high: float) -> FloatArray:
    """Frequency of the largest PSD bin with low <= f <= high; NaN when no bin falls inside."""
    mask = (freqs >= low) & (freqs <= high)
    if not mask.any():
        return np.full(psd.shape[:-1], np.nan)
    peaks: FloatArray = freqs[mask][np.argmax(psd[..., mask], axis=-1)]
    return peaks


def windows(x: FloatArray, window: int, step: int) -> FloatArray:
    """(..., n) -> (..., n_windows, window) as a strided view (no copy)."""
    view: FloatArray = np.lib.stride_tricks.sliding_window_view(x, window, axis=-1)[..., ::step, :]
    return view
