"""Reference for pi_eog_contamination_channel: which candidate EEG channel follows the EOG most.

MNE sample recording (60 EEG + 'EOG 061', 600 Hz). Every candidate EEG channel and the EOG are
band-passed 1-15 Hz (4th-order Butterworth, forward-backward) over the whole recording; the
candidate with the largest absolute Pearson correlation with the EOG is the most contaminated.
"""
import mne
import numpy as np
from scipy import signal


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_fif(inputs[0], preload=True, verbose="ERROR")
    fs = raw.info["sfreq"]
    names = list(params["candidates"])
    data = raw.get_data(picks=names + ["EOG 061"]) * 1e6
    sos = signal.butter(4, [1.0, 15.0], btype="bandpass", fs=fs, output="sos")
    filtered = signal.sosfiltfilt(sos, data, axis=1)
    eog = filtered[-1]
    corr = [abs(float(np.corrcoef(row, eog)[0, 1])) for row in filtered[:-1]]
    order = np.argsort(corr)[::-1]
    return {
        "most_contaminated": names[int(order[0])],
        "max_abs_r": round(corr[int(order[0])], 3),
        # Audit only: the runner-up's correlation, to check the answer's margin.
        "_second_abs_r": round(corr[int(order[1])], 3),
    }
