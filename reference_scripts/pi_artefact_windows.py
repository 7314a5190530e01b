"""Reference for pi_artefact_windows: 1-s windows of a PLUX EEG flagged by amplitude/gradient rules.

The single EEG channel is raw/channel_N under the device group (the only raw dataset that is
not nSeq). Complete 1-s windows (1000 samples) from the first sample are flagged when their
peak-to-peak exceeds ptp_thr or their largest absolute sample-to-sample difference exceeds
grad_thr (raw ADC units, strict inequalities).
"""
import h5py
import numpy as np

FS = 1000


def run(inputs: list[str], params: dict) -> dict:
    with h5py.File(inputs[0], "r") as handle:
        (device,) = list(handle.keys())
        names = [k for k in handle[f"{device}/raw"].keys() if k != "nSeq"]
        if len(names) != 1:
            raise ValueError(f"pi_artefact_windows: expected one EEG channel, got {names}")
        eeg = handle[f"{device}/raw/{names[0]}"][:, 0].astype(float)
    count = eeg.size // FS
    windows = eeg[: count * FS].reshape(count, FS)
    ptp = windows.max(axis=1) - windows.min(axis=1)
    grad = np.abs(np.diff(windows, axis=1)).max(axis=1)
    flagged = (ptp > params["ptp_thr"]) | (grad > params["grad_thr"])
    # Audit only: the closest any window comes to a threshold, relative to it.
    margin = min(float(np.min(np.abs(ptp / params["ptp_thr"] - 1))),
                 float(np.min(np.abs(grad / params["grad_thr"] - 1))))
    return {
        "flagged_windows": [int(i) for i in np.flatnonzero(flagged)],
        "window_count": int(count),
        "artefact_percent": round(100.0 * float(flagged.sum()) / count, 2),
        "_margin": round(margin, 4),
    }
