"""Reference for sa_delta_peak_epoch: which candidate 30-s epoch has the most relative delta.

For each candidate epoch and each listed channel: Welch PSD (4-s Hann segments, 50%
overlap) of the stored signal, relative delta = PSD summed over 0.5 <= f < 4 Hz divided by
the sum over 0.5 <= f < 30 Hz. Channels whose peak-to-peak amplitude in the epoch exceeds
the artefact limit are left out of that epoch's channel mean.
"""
import mne
import numpy as np
from scipy.signal import welch

EPOCH_SEC = 30


def _relative_delta(segment: np.ndarray, sf: float) -> float:
    freqs, psd = welch(segment, sf, window="hann", nperseg=int(4 * sf), noverlap=int(2 * sf))
    delta = psd[(freqs >= 0.5) & (freqs < 4)].sum()
    total = psd[(freqs >= 0.5) & (freqs < 30)].sum()
    return float(delta / total)


def epoch_scores(path: str, params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(path, preload=True, verbose="ERROR")
    sf = raw.info["sfreq"]
    data = raw.get_data(picks=params["channels"], units="uV")
    width = int(EPOCH_SEC * sf)
    scores = {}
    for label, epoch in params["candidates"].items():
        block = data[:, (epoch - 1) * width: epoch * width]
        if block.shape[1] != width:
            raise ValueError(f"sa_delta_peak_epoch: epoch {epoch} lies beyond the recording")
        keep = np.ptp(block, axis=1) <= params["artefact_uv"]
        if not keep.any():
            raise ValueError(f"sa_delta_peak_epoch: every channel rejected in epoch {epoch}")
        scores[label] = float(np.mean([_relative_delta(x, sf) for x in block[keep]]))
    return scores


def run(inputs: list[str], params: dict) -> dict:
    scores = epoch_scores(inputs[0], params)
    best = max(sorted(scores), key=lambda label: scores[label])
    return {"peak_label": best, "peak_rel_delta": round(scores[best], 4)}
