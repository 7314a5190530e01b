"""Reference for pi_open_muscle_channel: which candidate channel carries the most muscle (EMG)
activity in a window, by a method ensemble.

Inputs: the EEGMMIDB EDF (64 channels, 160 Hz; names carry trailing dots, 'T8..'), the MNE
sample FIF (EEG 001..060 as stored, no projector) or the spkit Emotiv pickle (dict; 'X_raw' is
samples x 14 channels at 128 Hz, names in 'ch_names'). Candidates are matched to the file's
names ignoring dots, spaces and case, and answered as the candidate list writes them.

Muscle activity is broadband power above the EEG's main rhythms; four pipelines rank it:
- relative 20-45 Hz power (over 1-45 Hz), Welch 2-s Hann segments, 50% overlap;
- relative 30-45 Hz power (over 1-45 Hz), DPSS multitaper (2-Hz bandwidth);
- absolute 25-45 Hz power, Welch 1-s Hamming segments;
- RMS of a 4th-order Butterworth 20-45 Hz band-pass (zero phase) of the whole recording.
Where the rate allows a band above 100 Hz (the MNE sample data, 600 Hz), two more, since an
analyst may well measure muscle where little EEG remains:
- RMS of a 4th-order Butterworth 110-140 Hz band-pass (the band of MNE's annotate_muscle_zscore);
- absolute 100-150 Hz power, Welch 2-s Hann segments.
Each names its top candidate; a binding where they differ is rejected (a channel that leads in
the EEG band but ties in the high band is no fair question).
"""
import pickle

import mne
import numpy as np
from scipy import signal

HIGH_BAND_MIN_RATE = 400.0  # a 100-150 Hz band needs a rate well above 300 Hz


def _key(name):
    return name.replace(".", "").replace(" ", "").casefold()


def _load(path, candidates):
    """(data in the file's unit, rate, names) of the candidates, over the whole recording."""
    if path.endswith(".pkl"):
        with open(path, "rb") as handle:
            obj = pickle.load(handle)
        names, data, fs = list(obj["ch_names"]), np.asarray(obj["X_raw"], float).T, float(obj["fs"])
    else:
        raw = mne.io.read_raw(path, preload=False, verbose="ERROR")
        names, fs, data = list(raw.ch_names), float(raw.info["sfreq"]), None
    index = {_key(n): i for i, n in enumerate(names)}
    missing = [c for c in candidates if _key(c) not in index]
    if missing:
        raise ValueError(f"pi_open_muscle_channel: candidates {missing} not in the file")
    picks = [index[_key(c)] for c in candidates]
    if data is None:
        data = raw.get_data(picks=picks) * 1e6
    else:
        data = data[picks]
    return data, fs


def _band(freqs, psd, low, high):
    return psd[:, (freqs >= low) & (freqs <= high)].sum(axis=1)


def run(inputs: list[str], params: dict) -> dict:
    candidates = list(params["candidates"])
    data, fs = _load(inputs[0], candidates)
    a, b = int(round(params["start_s"] * fs)), int(round(params["end_s"] * fs))
    if not 0 <= a < b <= data.shape[1]:
        raise ValueError("pi_open_muscle_channel: window outside the recording")
    x = data[:, a:b] - data[:, a:b].mean(axis=1, keepdims=True)
    scores = {}
    n2 = int(round(2 * fs))
    f, p = signal.welch(x, fs=fs, window="hann", nperseg=n2, noverlap=n2 // 2, axis=1)
    scores["welch_2s_relative_20_45"] = _band(f, p, 20, 45) / _band(f, p, 1, 45)
    p, f = mne.time_frequency.psd_array_multitaper(x, fs, fmin=0.5, fmax=46.0, bandwidth=2.0, verbose="ERROR")
    scores["multitaper_relative_30_45"] = _band(f, p, 30, 45) / _band(f, p, 1, 45)
    n1 = int(round(fs))
    f, p = signal.welch(x, fs=fs, window="hamming", nperseg=n1, noverlap=n1 // 2, axis=1)
    scores["welch_1s_absolute_25_45"] = _band(f, p, 25, 45)
    sos = signal.butter(4, [20.0, 45.0], btype="bandpass", fs=fs, output="sos")
    hf = signal.sosfiltfilt(sos, data, axis=1)[:, a:b]
    scores["butterworth_20_45_rms"] = np.sqrt(np.mean(hf ** 2, axis=1))
    if fs >= HIGH_BAND_MIN_RATE:
        sos = signal.butter(4, [110.0, 140.0], btype="bandpass", fs=fs, output="sos")
        hf = signal.sosfiltfilt(sos, data, axis=1)[:, a:b]
        scores["butterworth_110_140_rms"] = np.sqrt(np.mean(hf ** 2, axis=1))
        f, p = signal.welch(x, fs=fs, window="hann", nperseg=n2, noverlap=n2 // 2, axis=1)
        scores["welch_2s_absolute_100_150"] = _band(f, p, 100, 150)
    winners = {name: candidates[int(np.argmax(v))] for name, v in scores.items()}
    # Audit only: per pipeline, the winner's score over the runner-up's.
    margins = {name: round(float(np.sort(v)[-1] / np.sort(v)[-2]), 3) for name, v in scores.items()}
    return {"most_contaminated": dict(sorted(winners.items())), "_margins": dict(sorted(margins.items()))}
