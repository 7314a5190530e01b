"""Reference for fa_alpha_power_change: the change of one channel's alpha (8-13 Hz) power from
window A to window B, in dB, from a method ensemble.

The question fixes the channel (as recorded), the two windows, the band and the index
10*log10(P_B / P_A); the estimator is the analyst's choice, the same for both windows:
- welch2: Welch, 2-s Hann segments, 50 % overlap, PSD bins summed over 8-13 Hz;
- welch4_trapz: Welch, 4-s Hann segments, 50 % overlap, trapezoidal integration;
- hp1_hamming2: 1-Hz zero-phase FIR high-pass (MNE defaults, each window padded with up to
  5 s of the recording), then Welch with 2-s Hamming segments overlapping by 75 %, bins
  summed;
- multitaper_4s: DPSS multitaper (1 Hz bandwidth, 3 tapers) on consecutive 4-s epochs,
  averaged, bins summed;
- bandpass_variance: zero-phase FIR band-pass 8-13 Hz (MNE defaults) of each padded window,
  the variance over the window.
The window with more alpha power is the sign of the change; every pipeline must agree on it.
"""
import pickle

import h5py
import mne
import numpy as np
from scipy import signal

BAND = (8.0, 13.0)
PAD_S = 5.0


def read_channel(path: str, channel: str):
    """(a reader(start, stop) of the channel's samples, sfreq, number of samples)."""
    if path.endswith(".h5"):
        with h5py.File(path, "r") as handle:
            (device,) = list(handle.keys())
            full = handle[f"{device}/raw/channel_1"][:, 0].astype(float)
        return (lambda a, b: full[a:b]), 1000.0, full.size
    if path.endswith(".pkl"):
        with open(path, "rb") as handle:
            array, names = pickle.load(handle)
        full = np.asarray(array, dtype=float)[:, names.index(channel)]
        return (lambda a, b: full[a:b]), 128.0, full.size
    raw = mne.io.read_raw(path, preload=False, verbose="ERROR")
    return (lambda a, b: raw.get_data(picks=[channel], start=a, stop=b)[0] * 1e6), float(raw.info["sfreq"]), raw.n_times


def window(read, sfreq: float, n_total: int, start_s: float, end_s: float):
    """(padded samples, offset of the window in them, window length)."""
    start, stop = int(round(start_s * sfreq)), int(round(end_s * sfreq))
    if not 0 <= start < stop <= n_total:
        raise ValueError(f"window {start_s}-{end_s} s outside the recording")
    first = max(0, start - int(round(PAD_S * sfreq)))
    last = min(n_total, stop + int(round(PAD_S * sfreq)))
    return read(first, last), start - first, stop - start


def in_band(freqs: np.ndarray) -> np.ndarray:
    return (freqs >= BAND[0]) & (freqs <= BAND[1])


def powers(padded: np.ndarray, sfreq: float, offset: int, length: int) -> dict:
    x = padded[offset:offset + length]
    out = {}
    nper = int(round(2 * sfreq))
    freqs, psd = signal.welch(x, fs=sfreq, window="hann", nperseg=nper, noverlap=nper // 2, detrend="constant")
    out["welch2"] = psd[in_band(freqs)].sum()
    nper = int(round(4 * sfreq))
    freqs, psd = signal.welch(x, fs=sfreq, window="hann", nperseg=nper, noverlap=nper // 2, detrend="constant")
    out["welch4_trapz"] = np.trapezoid(psd[in_band(freqs)], freqs[in_band(freqs)])
    highpassed = mne.filter.filter_data(padded, sfreq, 1.0, None, verbose="ERROR")[offset:offset + length]
    nper = int(round(2 * sfreq))
    freqs, psd = signal.welch(highpassed, fs=sfreq, window="hamming", nperseg=nper, noverlap=(3 * nper) // 4,
                              detrend="constant")
    out["hp1_hamming2"] = psd[in_band(freqs)].sum()
    size = int(round(4 * sfreq))
    epochs = x[: x.size // size * size].reshape(-1, size)
    psd, freqs = mne.time_frequency.psd_array_multitaper(epochs, sfreq, fmin=0.5, fmax=45.0, bandwidth=1.0,
                                                          verbose="ERROR")
    out["multitaper_4s"] = psd.mean(axis=0)[in_band(freqs)].sum()
    out["bandpass_variance"] = mne.filter.filter_data(padded, sfreq, *BAND, verbose="ERROR")[offset:offset + length].var()
    return {name: float(value) for name, value in out.items()}


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    read, sfreq, n_total = read_channel(inputs[0], params["channel"])
    padded, offset, length = window(read, sfreq, n_total, params["a_start_s"], params["a_end_s"])
    a = powers(padded, sfreq, offset, length)
    padded, offset, length = window(read, sfreq, n_total, params["b_start_s"], params["b_end_s"])
    b = powers(padded, sfreq, offset, length)
    change = {name: round(10 * float(np.log10(b[name] / a[name])), 2) for name in sorted(a)}
    higher = {name: "B" if value > 0 else "A" for name, value in change.items()}
    return {"alpha_change_db": change, "higher_window": higher}
