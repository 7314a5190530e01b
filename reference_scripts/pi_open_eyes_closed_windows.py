"""Reference for pi_open_eyes_closed_windows: which windows of the PLUX single-lead EEG were
recorded with the eyes closed, from the EEG alone, by a method ensemble.

channel_1 is the EEG (uint16 ADC counts, cast to float). Every window must lie inside one block
of the protocol marker (channel_5; below 38000 = eyes closed), and both states must occur, or
the binding is refused. The marker is not used by the pipelines: it joins the ensemble as a
check, so a binding where the EEG-based answer and the protocol disagree is rejected.

Each pipeline computes one alpha measure per window and splits the windows into a high-alpha
(eyes closed) and a low-alpha (eyes open) group:
- Welch 2-s Hann alpha power (8-13 Hz), split by optimal two-means on log power;
- multitaper relative alpha (8-13 over 1-30 Hz), two-means on the log;
- mean Hilbert envelope of a 4th-order Butterworth 8-13 Hz band-pass (whole recording, zero
  phase), split at the largest gap between sorted log values;
- Welch 1-s alpha over theta + beta (4-8 and 13-30 Hz), split at the midrange of the logs;
- MNE FIR 8-13 Hz band-pass (whole recording) mean square, largest gap of the logs;
- Welch 2-s alpha power again with the midrange split.
"""
import h5py
import mne
import numpy as np
from scipy import signal

FS = 1000
MARKER_MID = 38000


def _sum(freqs, psd, low, high):
    return float(psd[(freqs >= low) & (freqs <= high)].sum())


def _two_means(values):
    """The high group of the optimal two-group split of 1-D values (least within-group SSE)."""
    order = np.argsort(values)
    best = None
    for k in range(1, len(values)):
        low, high = values[order[:k]], values[order[k:]]
        sse = ((low - low.mean()) ** 2).sum() + ((high - high.mean()) ** 2).sum()
        if best is None or sse < best[0]:
            best = (sse, order[k:])
    return set(int(i) for i in best[1])


def _largest_gap(values):
    order = np.argsort(values)
    k = int(np.argmax(np.diff(values[order]))) + 1
    return set(int(i) for i in order[k:])


def _midrange(values):
    cut = (values.max() + values.min()) / 2
    return set(int(i) for i in np.flatnonzero(values > cut))


def run(inputs: list[str], params: dict) -> dict:
    with h5py.File(inputs[0], "r") as handle:
        (device,) = list(handle.keys())
        eeg = handle[f"{device}/raw/channel_1"][:, 0].astype(float)
        marker = handle[f"{device}/raw/channel_5"][:, 0].astype(float)
    centred = eeg - eeg.mean()
    sos = signal.butter(4, [8.0, 13.0], btype="bandpass", fs=FS, output="sos")
    iir = signal.sosfiltfilt(sos, centred)
    fir = mne.filter.filter_data(centred, FS, 8.0, 13.0, verbose="ERROR")
    length = float(params["length_s"])
    labels = [f"W{i + 1}" for i in range(len(params["starts_s"]))]
    features = {name: [] for name in ("welch2", "mt_rel", "envelope", "ratio", "fir_power")}
    closed = []
    for start_s in params["starts_s"]:
        a, b = int(round(start_s * FS)), int(round((start_s + length) * FS))
        if not 0 <= a < b <= eeg.size:
            raise ValueError("pi_open_eyes_closed_windows: a window is outside the recording")
        low = marker[a:b] < MARKER_MID
        if low.any() and not low.all():
            raise ValueError(f"pi_open_eyes_closed_windows: window at {start_s} s spans a marker change")
        closed.append(bool(low[0]))
        x = eeg[a:b] - eeg[a:b].mean()
        f, p = signal.welch(x, fs=FS, window="hann", nperseg=2 * FS, noverlap=FS)
        features["welch2"].append(_sum(f, p, 8, 13))
        p, f = mne.time_frequency.psd_array_multitaper(x, FS, fmin=0.5, fmax=40.0, bandwidth=1.0, verbose="ERROR")
        features["mt_rel"].append(_sum(f, p, 8, 13) / _sum(f, p, 1, 30))
        features["envelope"].append(float(np.abs(signal.hilbert(iir[a:b])).mean()))
        f, p = signal.welch(x, fs=FS, window="hann", nperseg=FS, noverlap=FS // 2)
        flank = float(p[((f >= 4) & (f < 8)) | ((f > 13) & (f <= 30))].sum())
        features["ratio"].append(_sum(f, p, 8, 13) / flank)
        features["fir_power"].append(float(np.mean(fir[a:b] ** 2)))
    if all(closed) or not any(closed):
        raise ValueError("pi_open_eyes_closed_windows: the windows must include both eye states")
    logs = {name: np.log(np.asarray(v)) for name, v in features.items()}
    splits = {
        "welch2_two_means": _two_means(logs["welch2"]),
        "multitaper_relative_two_means": _two_means(logs["mt_rel"]),
        "iir_envelope_largest_gap": _largest_gap(logs["envelope"]),
        "welch1_alpha_ratio_midrange": _midrange(logs["ratio"]),
        "fir_power_largest_gap": _largest_gap(logs["fir_power"]),
        "welch2_midrange": _midrange(logs["welch2"]),
        "marker_check": {i for i, c in enumerate(closed) if c},
    }
    answer = {name: [labels[i] for i in sorted(group)] for name, group in sorted(splits.items())}
    return {
        "closed_windows": answer,
        # Audit only: each window's Welch 2-s alpha power relative to the weakest window, in dB.
        "_alpha_db": [round(float(10 * (v - logs["welch2"].min()) / np.log(10)), 2) for v in logs["welch2"]],
    }
