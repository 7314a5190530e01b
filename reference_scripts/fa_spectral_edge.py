"""Reference for fa_spectral_edge: spectral edge frequency (SEF) of one channel in a window.

Loads one channel in microvolts, cuts the window, Welch PSD (4-s Hann segments, 50 %
overlap), and returns the lowest grid frequency in [f_lo, f_hi] at which the cumulative PSD
sum from f_lo reaches the given percentage of the total over [f_lo, f_hi].
"""
import pickle

import mne
import numpy as np
from scipy import signal


def load_channel(path: str, channel: str) -> tuple[np.ndarray, float]:
    """One channel's whole signal in microvolts and the sampling rate."""
    if path.endswith(".pkl"):
        with open(path, "rb") as handle:
            data, names = pickle.load(handle)
        return np.asarray(data, dtype=float)[:, names.index(channel)], 128.0
    raw = mne.io.read_raw(path, preload=False, verbose="ERROR")
    return raw.get_data(picks=[channel])[0] * 1e6, float(raw.info["sfreq"])


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    x, sfreq = load_channel(inputs[0], params["channel"])
    start = int(round(params["start_s"] * sfreq))
    stop = int(round((params["start_s"] + params["length_s"]) * sfreq))
    nperseg = int(round(4 * sfreq))
    freqs, psd = signal.welch(x[start:stop], fs=sfreq, window="hann", nperseg=nperseg,
                              noverlap=nperseg // 2, detrend="constant",
                              scaling="density", average="mean")
    low, high = params["range_hz"]
    keep = (freqs >= low) & (freqs <= high)
    freqs, psd = freqs[keep], psd[keep]
    cumulative = np.cumsum(psd) / psd.sum()
    # first bin whose cumulative share reaches the percentage (>=, not >)
    index = int(np.argmax(cumulative >= params["percent"] / 100.0))
    return {"sef_hz": round(float(freqs[index]), 2)}
