"""Reference for fa_theta_beta_max_channel: which listed channel has the largest theta/beta ratio.

Signals as stored (no filter, reference change or SSP), Welch PSD with 2-s Hann segments and
50 % overlap, theta 4-8 Hz over beta 13-30 Hz (bin sums). Refuses an answer whose lead over
the runner-up is under 5 %: such a binding would not have one robust answer.
"""
import mne
import numpy as np
from scipy import signal

MIN_MARGIN = 0.05


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    path = inputs[0]
    if path.endswith(".fif"):
        raw = mne.io.read_raw_fif(path, preload=True, verbose="ERROR")
    else:
        raw = mne.io.read_raw_edf(path, preload=True, verbose="ERROR")
    channels = params["channels"]
    missing = [name for name in channels if name not in raw.ch_names]
    if missing:
        raise ValueError(f"fa_theta_beta_max_channel: channels not in the file: {missing}")
    sfreq = raw.info["sfreq"]
    # get_data leaves the file's SSP projectors unapplied (they are inactive on read).
    data = np.vstack([raw.get_data(picks=[name]) for name in channels])
    nperseg = int(round(2 * sfreq))
    freqs, psd = signal.welch(
        data, fs=sfreq, window="hann", nperseg=nperseg, noverlap=nperseg // 2,
        detrend="constant", scaling="density", average="mean",
    )
    theta = psd[:, (freqs >= 4) & (freqs <= 8)].sum(axis=1)
    beta = psd[:, (freqs >= 13) & (freqs <= 30)].sum(axis=1)
    ratio = theta / beta
    order = np.argsort(-ratio, kind="stable")
    margin = ratio[order[0]] / ratio[order[1]] - 1
    if margin < MIN_MARGIN:
        raise ValueError(
            f"fa_theta_beta_max_channel: {channels[order[0]]} leads {channels[order[1]]} "
            f"by only {margin:.1%}; choose another channel list"
        )
    return {"max_channel": channels[order[0]]}
