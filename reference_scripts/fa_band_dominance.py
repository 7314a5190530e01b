"""Reference for fa_band_dominance: delta vs alpha dominance of a channel group, with a reason.

Loads the listed channels in microvolts, cuts the window, Welch PSD (2-s Hann segments,
50 % overlap), relative delta (1-4 Hz) and alpha (8-13 Hz) power over 1-30 Hz per channel,
averaged over the group; the larger of the two names the dominant band and a one-sentence
conclusion is generated from the numbers.
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


def relative_powers(x: np.ndarray, sfreq: float) -> tuple[float, float]:
    nperseg = int(round(2 * sfreq))
    freqs, psd = signal.welch(x, fs=sfreq, window="hann", nperseg=nperseg,
                              noverlap=nperseg // 2, detrend="constant", scaling="density")
    total = psd[(freqs >= 1) & (freqs < 30)].sum()
    delta = psd[(freqs >= 1) & (freqs < 4)].sum() / total
    alpha = psd[(freqs >= 8) & (freqs < 13)].sum() / total
    return float(delta), float(alpha)


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    rel = []
    for channel in params["channels"]:
        x, sfreq = load_channel(inputs[0], channel)
        start = int(round(params["start_s"] * sfreq))
        stop = int(round((params["start_s"] + params["length_s"]) * sfreq))
        rel.append(relative_powers(x[start:stop], sfreq))
    delta, alpha = (round(float(v), 3) for v in np.mean(rel, axis=0))
    dominant = "alpha" if alpha > delta else "delta"
    weaker = "delta" if dominant == "alpha" else "alpha"
    high, low = max(delta, alpha), min(delta, alpha)
    conclusion = (
        f"The {dominant} band dominates over the {params['group']} channels: its mean relative "
        f"power {high:.3f} exceeds the {weaker} band's {low:.3f} by a factor of "
        f"{high / low:.1f}, consistent with {params['context']}."
    )
    return {"delta_rel": delta, "alpha_rel": alpha, "dominant_band": dominant,
            "conclusion": conclusion}
