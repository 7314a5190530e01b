"""Reference for fa_hjorth: Hjorth mobility and complexity of one channel in a window.

Loads one channel in microvolts, band-passes the whole signal 1-40 Hz with MNE's default
FIR filter, cuts the window, and computes the Hjorth parameters with first differences
scaled by the sampling rate (derivatives per second).
"""
import pickle

import mne
import numpy as np


def load_channel(path: str, channel: str) -> tuple[np.ndarray, float]:
    """One channel's whole signal in microvolts and the sampling rate."""
    if path.endswith(".pkl"):
        with open(path, "rb") as handle:
            data, names = pickle.load(handle)
        return np.asarray(data, dtype=float)[:, names.index(channel)], 128.0
    raw = mne.io.read_raw(path, preload=False, verbose="ERROR")
    return raw.get_data(picks=[channel])[0] * 1e6, float(raw.info["sfreq"])


def mobility(x: np.ndarray, sfreq: float) -> float:
    return float(np.sqrt(np.var(np.diff(x) * sfreq) / np.var(x)))


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    x, sfreq = load_channel(inputs[0], params["channel"])
    x = mne.filter.filter_data(x[np.newaxis, :], sfreq, l_freq=1.0, h_freq=40.0,
                               verbose="ERROR")[0]
    start = int(round(params["start_s"] * sfreq))
    stop = int(round((params["start_s"] + params["length_s"]) * sfreq))
    x = x[start:stop]
    mob = mobility(x, sfreq)
    complexity = mobility(np.diff(x) * sfreq, sfreq) / mob
    return {"mobility": round(mob, 2), "complexity": round(float(complexity), 3)}
