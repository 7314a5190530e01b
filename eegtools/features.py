"""Numeric features over the last axis of an array (µV), vectorised: a whole set of windows
is one call. Plain functions, no I/O, no argument checking (the tools do that)."""
from __future__ import annotations

import numpy as np
from scipy import fft as sp_fft
from scipy import signal

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


def rms(x: np.ndarray) -> np.ndarray:
    """Root mean square after removing each segment's mean."""
    return np.std(x, axis=-1)


def peak_to_peak(x: np.ndarray) -> np.ndarray:
    return np.ptp(x, axis=-1)


def line_length(x: np.ndarray, sfreq: float) -> np.ndarray:
    """Summed absolute sample-to-sample change per second of signal (µV/s)."""
    return np.abs(np.diff(x, axis=-1)).sum(axis=-1) * sfreq / x.shape[-1]


def zero_crossing_rate(x: np.ndarray, sfreq: float) -> np.ndarray:
    """Sign changes of the mean-removed signal per second (Hz)."""
    centred = x - x.mean(axis=-1, keepdims=True)
    signs = np.signbit(centred)
    return (signs[..., 1:] != signs[..., :-1]).sum(axis=-1) * sfreq / x.shape[-1]


def hjorth(x: np.ndarray, sfreq: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Activity (variance, µV²), mobility expressed in Hz (sqrt(var(x')/var(x)) / 2π with the
    derivative per second), and complexity (mobility of x' over mobility of x, unitless)."""
    dx = np.diff(x, axis=-1) * sfreq
    ddx = np.diff(dx, axis=-1) * sfreq
    var_x, var_dx, var_ddx = (np.var(a, axis=-1) for a in (x, dx, ddx))
    with np.errstate(divide="ignore", invalid="ignore"):
        mobility = np.sqrt(var_dx / var_x)
        complexity = np.sqrt(var_ddx / var_dx) / mobility
    return var_x, mobility / (2 * np.pi), complexity


def welch_psd(x: np.ndarray, sfreq: float, segment_s: float = WELCH_SEGMENT_S) -> tuple[np.ndarray, np.ndarray]:
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
    psd = power.mean(axis=-2, dtype=np.float64) / (sfreq * float((window.astype(np.float64) ** 2).sum()))
    if nperseg % 2:
        psd[..., 1:] *= 2
    else:
        psd[..., 1:-1] *= 2
    return np.fft.rfftfreq(nperseg, 1.0 / sfreq), psd


def band_power(freqs: np.ndarray, psd: np.ndarray, low: float, high: float) -> np.ndarray:
    """Integrated power (µV²) of bins with low <= f < high; NaN when no bin falls inside."""
    mask = (freqs >= low) & (freqs < high)
    if not mask.any():
        return np.full(psd.shape[:-1], np.nan)
    df = freqs[1] - freqs[0] if len(freqs) > 1 else 1.0
    return psd[..., mask].sum(axis=-1) * df


def total_band(sfreq: float) -> tuple[float, float]:
    return TOTAL_BAND[0], min(TOTAL_BAND[1], sfreq / 2)


def peak_frequency(freqs: np.ndarray, psd: np.ndarray, low: float, high: float) -> np.ndarray:
    mask = (freqs >= low) & (freqs <= high)
    if not mask.any():
        return np.full(psd.shape[:-1], np.nan)
    return freqs[mask][np.argmax(psd[..., mask], axis=-1)]


def windows(x: np.ndarray, window: int, step: int) -> np.ndarray:
    """(..., n) -> (..., n_windows, window) as a strided view (no copy)."""
    view = np.lib.stride_tricks.sliding_window_view(x, window, axis=-1)
    return view[..., ::step, :]
