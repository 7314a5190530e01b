"""Reference for fa_alpha_relpower: relative alpha power of a channel group, eyes-closed rest.

Band-pass 1-40 Hz with MNE's default zero-phase FIR filter, Welch PSD (2-s Hann segments,
50 % overlap), per-channel ratio of 8-13 Hz to 1-40 Hz power, mean over the group.
"""
import mne
import numpy as np
from scipy import signal


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    sfreq = raw.info["sfreq"]
    missing = [name for name in params["channels"] if name not in raw.ch_names]
    if missing:
        raise ValueError(f"fa_alpha_relpower: channels not in the file: {missing}")
    data = np.vstack([raw.get_data(picks=[name]) for name in params["channels"]])
    # mne.filter.filter_data defaults: firwin, hamming, zero phase, 'auto' length and
    # transition bands (1 Hz low, 10 Hz high here), reflect_limited padding.
    data = mne.filter.filter_data(data, sfreq, l_freq=1.0, h_freq=40.0, verbose="ERROR")
    nperseg = int(round(2 * sfreq))
    freqs, psd = signal.welch(
        data, fs=sfreq, window="hann", nperseg=nperseg, noverlap=nperseg // 2,
        detrend="constant", scaling="density", average="mean",
    )
    alpha = psd[:, (freqs >= 8) & (freqs <= 13)].sum(axis=1)
    total = psd[:, (freqs >= 1) & (freqs <= 40)].sum(axis=1)
    return {"alpha_rel": round(float(np.mean(alpha / total)), 4)}
