"""Reference for fa_band_power_db: absolute band power of one channel in a window, in dB re 1 uV^2.

Loads one channel in microvolts (EDF/FIF through MNE, the spkit Emotiv pickle directly),
cuts the window, Welch PSD (2-s Hann segments, 50 % overlap), sums the PSD over the band's
bins times the bin width, and reports 10*log10 of that power.
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
    x = x[start:stop]
    nperseg = int(round(2 * sfreq))
    freqs, psd = signal.welch(x, fs=sfreq, window="hann", nperseg=nperseg,
                              noverlap=nperseg // 2, detrend="constant",
                              scaling="density", average="mean")
    low, high = params["band_hz"]
    power = psd[(freqs >= low) & (freqs <= high)].sum() * (freqs[1] - freqs[0])
    return {"power_db": round(float(10 * np.log10(power)), 2),
            "power_uv2": round(float(power), 4)}
