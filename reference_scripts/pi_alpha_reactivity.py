"""Reference for pi_alpha_reactivity: alpha power of two windows of a PLUX eyes-closed/open EEG.

channel_1 is the EEG, channel_5 a two-level protocol marker (low while the eyes are closed:
those blocks carry four to eight times the alpha power of the others). Each window must lie
in one marker block and the two windows in different blocks of opposite state; the window
with more alpha must be the low-marker one, else the binding is refused.
"""
import h5py
import numpy as np
from scipy import signal

FS = 1000
MARKER_MID = 38000  # halfway between the marker's two levels (~22000 and ~54000)


def run(inputs: list[str], params: dict) -> dict:
    with h5py.File(inputs[0], "r") as handle:
        (device,) = list(handle.keys())
        eeg = handle[f"{device}/raw/channel_1"][:, 0].astype(float)
        marker = handle[f"{device}/raw/channel_5"][:, 0].astype(float)
    power, closed = {}, {}
    for name in ("a", "b"):
        start, end = (int(round(params[f"{name}_{edge}"] * FS)) for edge in ("start", "end"))
        low = marker[start:end] < MARKER_MID
        if not (low.all() or not low.any()):
            raise ValueError(f"pi_alpha_reactivity: window {name.upper()} spans a marker change")
        closed[name] = bool(low[0])
        segment = eeg[start:end] - eeg[start:end].mean()
        freqs, psd = signal.welch(
            segment, fs=FS, window="hann", nperseg=2 * FS, noverlap=FS,
            detrend="constant", scaling="density", average="mean",
        )
        power[name] = psd[(freqs >= 8) & (freqs <= 13)].sum()
    richer = "A" if power["a"] > power["b"] else "B"
    if closed["a"] == closed["b"] or closed[richer.lower()] is not True:
        raise ValueError("pi_alpha_reactivity: windows must be one eyes-closed and one eyes-open "
                         "block, the closed one with more alpha")
    return {
        "alpha_reactivity_db": round(float(10 * np.log10(power["a"] / power["b"])), 2),
        "eyes_closed_window": richer,
    }
