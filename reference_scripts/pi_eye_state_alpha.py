"""Reference for pi_eye_state_alpha: eye state of a window from the PLUX marker, its alpha share,
and a conclusion comparing it with the recording's eyes-open baseline.

channel_5 is the protocol marker (low level, < 38000, while the eyes are closed, as the
instruction states); channel_1 the EEG. Relative alpha = Welch power (2-s Hann, 50%
overlap) summed over 8-13 Hz divided by the sum over 1-30 Hz (both edges included).
The eyes-open baseline is the mean relative alpha of all complete eyes-open marker blocks.
"""
import h5py
import numpy as np
from scipy import signal

FS = 1000
MARKER_MID = 38000


def run(inputs: list[str], params: dict) -> dict:
    with h5py.File(inputs[0], "r") as handle:
        (device,) = list(handle.keys())
        eeg = handle[f"{device}/raw/channel_1"][:, 0].astype(float)
        marker = handle[f"{device}/raw/channel_5"][:, 0].astype(float)
    start, end = int(round(params["start_s"] * FS)), int(round(params["end_s"] * FS))
    low = marker[start:end] < MARKER_MID
    if low.any() and not low.all():
        raise ValueError("pi_eye_state_alpha: window spans a marker change")
    state = "closed" if low[0] else "open"
    rel = _alpha_rel(eeg[start:end])
    baseline = float(np.mean([_alpha_rel(eeg[a:b]) for a, b in _open_blocks(marker)]))
    ratio = rel / baseline
    above = ratio >= 1.2
    verdict = "above" if above else "not above"
    if state == "closed":
        meaning = ("consistent with alpha rising when the eyes close." if above else
                   "a weaker alpha increase than eye closure usually brings.")
    else:
        meaning = ("unusually high alpha for open eyes." if above else
                   "as expected for alpha blocked by open eyes.")
    conclusion = (f"The window was recorded with the eyes {state}; its relative alpha power "
                  f"({rel:.3f}) is {verdict} 1.2 times the eyes-open baseline ({baseline:.3f}; "
                  f"ratio {ratio:.2f}), {meaning}")
    return {
        "eye_state": state,
        "alpha_rel": round(rel, 3),
        "baseline_alpha_rel": round(baseline, 3),
        "conclusion": conclusion,
    }


def _alpha_rel(segment: np.ndarray) -> float:
    freqs, psd = signal.welch(segment - segment.mean(), fs=FS, window="hann", nperseg=2 * FS,
                              noverlap=FS, detrend="constant", scaling="density", average="mean")
    alpha = psd[(freqs >= 8) & (freqs <= 13)].sum()
    total = psd[(freqs >= 1) & (freqs <= 30)].sum()
    return float(alpha / total)


def _open_blocks(marker: np.ndarray) -> list[tuple[int, int]]:
    """Complete high-level blocks (the trailing block cut by the recording's end is left out)."""
    high = (marker >= MARKER_MID).astype(int)
    edges = np.flatnonzero(np.diff(high)) + 1
    bounds = np.r_[0, edges, marker.size]
    blocks = []
    for first, stop in zip(bounds[:-1], bounds[1:]):
        if high[first] and stop < marker.size:
            blocks.append((int(first), int(stop)))
    return blocks
