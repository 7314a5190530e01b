"""Reference for fa_alpha_asymmetry: alpha (8-13 Hz) power asymmetry ln(right) - ln(left)
between two homologous channels over a window, from a method ensemble.

The question fixes the band, the window, the channels (as recorded, no re-referencing) and
the index; the estimator is the analyst's choice. Each pipeline estimates the alpha power of
both channels over the same samples and returns ln(P_right / P_left):
- welch_2s: Welch, 2-s Hann segments, 50 % overlap, PSD bins summed over 8-13 Hz;
- welch_4s_trapz: Welch, 4-s Hann segments, 50 % overlap, trapezoidal integration;
- hp1_epochs_2s_hamming: 1-Hz FIR high-pass (MNE defaults, padded as below), then 2-s
  Hamming-windowed epochs overlapping by 75 %, mean periodogram (the classic
  frontal-asymmetry recipe), bins summed;
- multitaper: DPSS multitaper over the whole window (MNE's default half-bandwidth of 4
  frequency bins, 7 tapers), bins summed;
- bandpass_variance: zero-phase FIR band-pass 8-13 Hz (MNE defaults, padded with up to 5 s
  of the recording on each side), then the variance over the window.
The stronger side is the sign of the index; every pipeline must agree on it.
"""
import pickle

import mne
import numpy as np
from scipy import signal

BAND = (8.0, 13.0)
PAD_S = 5.0


def load(path: str, channels: list[str], start_s: float, end_s: float, pad_s: float):
    """(data in uV of the window plus padding, sfreq, index of the window's first sample in data,
    window length in samples)."""
    if path.endswith(".pkl"):
        with open(path, "rb") as handle:
            array, names = pickle.load(handle)
        sfreq = 128.0
        full = np.asarray(array, dtype=float)[:, [names.index(c) for c in channels]].T
        n_total = full.shape[1]
        reader = None
    else:
        raw = mne.io.read_raw(path, preload=False, verbose="ERROR")
        sfreq = float(raw.info["sfreq"])
        n_total = raw.n_times
        full = None
        reader = raw
    start, stop = int(round(start_s * sfreq)), int(round(end_s * sfreq))
    if not 0 <= start < stop <= n_total:
        raise ValueError(f"window {start_s}-{end_s} s outside the recording")
    first = max(0, start - int(round(pad_s * sfreq)))
    last = min(n_total, stop + int(round(pad_s * sfreq)))
    if reader is not None:
        data = reader.get_data(picks=channels, start=first, stop=last) * 1e6
    else:
        data = full[:, first:last]
    return data, sfreq, start - first, stop - start


def band_mask(freqs: np.ndarray) -> np.ndarray:
    return (freqs >= BAND[0]) & (freqs <= BAND[1])


def pipelines(padded: np.ndarray, sfreq: float, offset: int, length: int) -> dict:
    """{pipeline: alpha power per channel (array of 2)}."""
    x = padded[:, offset:offset + length]
    out = {}
    for name, seg_s, integrate in (("welch_2s", 2, "sum"), ("welch_4s_trapz", 4, "trapz")):
        nper = int(round(seg_s * sfreq))
        freqs, psd = signal.welch(x, fs=sfreq, window="hann", nperseg=nper, noverlap=nper // 2,
                                  detrend="constant", axis=-1)
        mask = band_mask(freqs)
        out[name] = (psd[:, mask].sum(axis=1) if integrate == "sum"
                     else np.trapezoid(psd[:, mask], freqs[mask], axis=1))
    nper = int(round(2 * sfreq))
    highpassed = mne.filter.filter_data(padded, sfreq, 1.0, None, verbose="ERROR")[:, offset:offset + length]
    freqs, psd = signal.welch(highpassed, fs=sfreq, window="hamming", nperseg=nper, noverlap=(3 * nper) // 4,
                              detrend="constant", axis=-1)
    out["hp1_epochs_2s_hamming"] = psd[:, band_mask(freqs)].sum(axis=1)
    psd, freqs = mne.time_frequency.psd_array_multitaper(x, sfreq, fmin=1.0, fmax=40.0, verbose="ERROR")
    out["multitaper"] = psd[:, band_mask(freqs)].sum(axis=1)
    filtered = mne.filter.filter_data(padded, sfreq, BAND[0], BAND[1], verbose="ERROR")
    out["bandpass_variance"] = filtered[:, offset:offset + length].var(axis=1)
    return out


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    channels = [params["left"], params["right"]]
    padded, sfreq, offset, length = load(inputs[0], channels, params["start_s"], params["end_s"], PAD_S)
    powers = pipelines(padded, sfreq, offset, length)
    index = {name: round(float(np.log(p[1] / p[0])), 3) for name, p in sorted(powers.items())}
    side = {name: "right" if value > 0 else "left" for name, value in index.items()}
    return {"alpha_asymmetry": index, "stronger_side": side}
