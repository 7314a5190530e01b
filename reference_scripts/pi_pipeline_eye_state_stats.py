"""Reference for pi_pipeline_eye_state_stats: eye-state blocks of a PLUX EEG, per-epoch band power,
the reactivity and a two-group test, end to end.

channel_1 is the EEG (16-bit ADC), channel_5 a two-level protocol marker: low (~22000) while the
eyes are closed (those blocks carry 4-8 times the alpha power of the high ones; the script
checks it). Steps: ADC -> uV with the PLUX EEG sensor transfer function; 4th-order Butterworth
band-pass 1-40 Hz, zero phase, over the whole recording; blocks = maximal runs of one marker
level, the runs touching the first or last sample left out; trim_s cut at both ends of each
block, then consecutive epochs of epoch_s (a partial rest dropped); per epoch a Welch PSD
(1-s Hann segments, 50% overlap); band power = sum over lo <= f < hi times the 1-Hz step;
closed/open means, reactivity in dB, Welch's t-test on the per-epoch dB values (closed minus
open); a figure of the per-epoch values.
"""
import os

import h5py
import numpy as np
from scipy import signal, stats

FS = 1000
MARKER_MID = 38000  # halfway between the marker's two levels (~22000 and ~54000)
FIGURE = "eye_state_power.png"


def to_microvolts(adc: np.ndarray) -> np.ndarray:
    return (adc / 2 ** 16 - 0.5) * 3.0 / 41782 * 1e6


def run(inputs: list[str], params: dict) -> dict:
    with h5py.File(inputs[0], "r") as handle:
        (device,) = list(handle.keys())
        eeg = to_microvolts(handle[f"{device}/raw/channel_1"][:, 0].astype(float))
        marker = handle[f"{device}/raw/channel_5"][:, 0].astype(float)
    x = signal.sosfiltfilt(signal.butter(4, [1, 40], btype="bandpass", fs=FS, output="sos"), eeg)
    high = marker >= MARKER_MID
    edges = [0, *(np.flatnonzero(np.diff(high.astype(int))) + 1).tolist(), high.size]
    blocks = [(a, b, bool(high[a])) for a, b in zip(edges[:-1], edges[1:]) if a > 0 and b < high.size]
    length, trim = int(round(params["epoch_s"] * FS)), int(round(params["trim_s"] * FS))
    lo, hi = params["band_lo"], params["band_hi"]
    power = {True: [], False: []}  # marker high -> per-epoch band power
    alpha = {True: [], False: []}
    for a, b, level in blocks:
        start, stop = a + trim, b - trim
        for k in range((stop - start) // length):
            epoch = x[start + k * length:start + (k + 1) * length]
            freqs, psd = signal.welch(epoch, fs=FS, window="hann", nperseg=FS, noverlap=FS // 2,
                                      detrend="constant", scaling="density")
            step = freqs[1] - freqs[0]
            power[level].append(psd[(freqs >= lo) & (freqs < hi)].sum() * step)
            alpha[level].append(psd[(freqs >= 8) & (freqs < 13)].sum() * step)
    if not np.mean(alpha[False]) > 2 * np.mean(alpha[True]):
        raise ValueError("pi_pipeline_eye_state_stats: the low marker level should be the high-alpha (closed) state")
    closed, opened = np.array(power[False]), np.array(power[True])
    closed_db, open_db = 10 * np.log10(closed), 10 * np.log10(opened)
    test = stats.ttest_ind(closed_db, open_db, equal_var=False)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs("file_check", exist_ok=True)
    path = os.path.join("file_check", FIGURE)
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.boxplot([closed_db, open_db], showfliers=False)
    ax.set_xticks([1, 2], ["eyes closed", "eyes open"])
    ax.set_ylabel(f"{params['band_name']} power (dB re 1 uV^2)")
    fig.savefig(path, format="png", dpi=80)
    plt.close(fig)
    return {
        "closed_epochs": int(closed.size),
        "open_epochs": int(opened.size),
        "closed_power_db": round(float(10 * np.log10(closed.mean())), 2),
        "reactivity_db": round(float(10 * np.log10(closed.mean() / opened.mean())), 2),
        "t_statistic": round(float(test.statistic), 2),
        "figure": path,
        "figure_properties": {"format": "png"},
    }
