"""Reference for fa_aperiodic_exponent: the aperiodic (1/f) exponent of one channel's power
spectrum over a stated frequency range, from a method ensemble.

The question fixes the channel, the window and the fitting range (power ~ 1/f^chi, no knee;
oscillatory peaks are not part of the background); the estimator is the analyst's choice.
Each pipeline returns chi = minus the slope of log10 power against log10 frequency:
- welch2_exclude_alpha: Welch (2-s Hann, 50 % overlap), least-squares line over the range
  with 7-14 Hz left out;
- welch4_exclude_alpha: the same with 4-s segments;
- multitaper_exclude_alpha: DPSS multitaper over the whole window (MNE's defaults);
- welch4_two_pass: a first line over the whole range, then a refit on the bins that lie on
  or below it (the peak-rejecting two-step fit of spectral parameterisation tools);
- irasa: irregular-resampling auto-spectral analysis (yasa.irasa, 4-s segments,
  resampling factors 1.1-1.9 in steps of 0.05), a line fitted to its aperiodic component
  over the range.
"""
import pickle

import mne
import numpy as np
import yasa
from scipy import signal

ALPHA_GAP = (7.0, 14.0)


def load(path: str, channel: str, start_s: float, end_s: float) -> tuple[np.ndarray, float]:
    """The channel's samples over the window (uV) and the sampling rate."""
    if path.endswith(".pkl"):
        with open(path, "rb") as handle:
            array, names = pickle.load(handle)
        sfreq = 128.0
        x = np.asarray(array, dtype=float)[:, names.index(channel)]
        start, stop = int(round(start_s * sfreq)), int(round(end_s * sfreq))
        if not 0 <= start < stop <= x.size:
            raise ValueError(f"window {start_s}-{end_s} s outside the recording")
        return x[start:stop], sfreq
    raw = mne.io.read_raw(path, preload=False, verbose="ERROR")
    sfreq = float(raw.info["sfreq"])
    start, stop = int(round(start_s * sfreq)), int(round(end_s * sfreq))
    if not 0 <= start < stop <= raw.n_times:
        raise ValueError(f"window {start_s}-{end_s} s outside the recording")
    return raw.get_data(picks=[channel], start=start, stop=stop)[0] * 1e6, sfreq


def welch(x: np.ndarray, sfreq: float, seconds: float) -> tuple[np.ndarray, np.ndarray]:
    nper = int(round(seconds * sfreq))
    return signal.welch(x, fs=sfreq, window="hann", nperseg=nper, noverlap=nper // 2, detrend="constant")


def line_fit(freqs: np.ndarray, power: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
    """(slope, intercept) of log10 power against log10 frequency over the masked bins."""
    slope, intercept = np.polyfit(np.log10(freqs[mask]), np.log10(power[mask]), 1)
    return float(slope), float(intercept)


def exponents(x: np.ndarray, sfreq: float, low: float, high: float) -> dict:
    out = {}
    for name, seconds in (("welch2_exclude_alpha", 2.0), ("welch4_exclude_alpha", 4.0)):
        freqs, psd = welch(x, sfreq, seconds)
        mask = (freqs >= low) & (freqs <= high) & ~((freqs >= ALPHA_GAP[0]) & (freqs <= ALPHA_GAP[1]))
        out[name] = -line_fit(freqs, psd, mask)[0]
    psd, freqs = mne.time_frequency.psd_array_multitaper(x, sfreq, fmin=0.5, fmax=high + 5, verbose="ERROR")
    mask = (freqs >= low) & (freqs <= high) & ~((freqs >= ALPHA_GAP[0]) & (freqs <= ALPHA_GAP[1]))
    out["multitaper_exclude_alpha"] = -line_fit(freqs, psd, mask)[0]
    freqs, psd = welch(x, sfreq, 4.0)
    band = (freqs >= low) & (freqs <= high)
    slope, intercept = line_fit(freqs, psd, band)
    residual = np.log10(psd) - (intercept + slope * np.log10(np.where(freqs > 0, freqs, 1.0)))
    out["welch4_two_pass"] = -line_fit(freqs, psd, band & (residual <= 0))[0]
    freqs, aperiodic, _ = yasa.irasa(x, sf=sfreq, band=(low, high), win_sec=4, return_fit=False,
                                     hset=np.arange(1.1, 1.95, 0.05), verbose="ERROR")
    out["irasa"] = -line_fit(freqs, aperiodic[0], np.ones(freqs.size, bool))[0]
    return out


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    x, sfreq = load(inputs[0], params["channel"], params["start_s"], params["end_s"])
    low, high = params["fit_low_hz"], params["fit_high_hz"]
    values = exponents(x, sfreq, low, high)
    return {"exponent": {name: round(value, 3) for name, value in sorted(values.items())}}
