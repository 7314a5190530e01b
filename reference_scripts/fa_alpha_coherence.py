"""Reference for fa_alpha_coherence: magnitude-squared coherence between two channels, averaged
over the alpha band (8-13 Hz), over a window, from a method ensemble.

The question fixes the channels (as recorded: no re-referencing), the window, the band and
the measure (magnitude-squared coherence |Sxy|^2 / (Sxx Syy), averaged over the frequency
bins of the band); how the cross- and auto-spectra are estimated is the analyst's choice:
- welch2: scipy.signal.coherence, 2-s Hann segments, 50 % overlap;
- welch4: 4-s Hann segments, 50 % overlap;
- welch1_hamming: 1-s Hamming segments, 50 % overlap (1-Hz bins);
- multitaper_4s: consecutive 4-s epochs, DPSS tapers of 1 Hz bandwidth (3 tapers), cross-
  and auto-spectra averaged over epochs and tapers;
- hp1_welch2: a 1-Hz zero-phase FIR high-pass (MNE defaults, padded with up to 5 s of the
  recording) before the 2-s Welch estimate.
Every pipeline averages the coherence over its bins with 8 <= f <= 13 Hz.
"""
import pickle

import mne
import numpy as np
from scipy import signal
from scipy.signal.windows import dpss

BAND = (8.0, 13.0)
PAD_S = 5.0


def load(path: str, channels: list[str], start_s: float, end_s: float):
    """(padded data in uV, sfreq, offset of the window in it, window length in samples)."""
    if path.endswith(".pkl"):
        with open(path, "rb") as handle:
            array, names = pickle.load(handle)
        sfreq = 128.0
        full = np.asarray(array, dtype=float)[:, [names.index(c) for c in channels]].T
        n_total, raw = full.shape[1], None
    else:
        raw = mne.io.read_raw(path, preload=False, verbose="ERROR")
        sfreq, n_total, full = float(raw.info["sfreq"]), raw.n_times, None
    start, stop = int(round(start_s * sfreq)), int(round(end_s * sfreq))
    if not 0 <= start < stop <= n_total:
        raise ValueError(f"window {start_s}-{end_s} s outside the recording")
    first = max(0, start - int(round(PAD_S * sfreq)))
    last = min(n_total, stop + int(round(PAD_S * sfreq)))
    data = raw.get_data(picks=channels, start=first, stop=last) * 1e6 if raw is not None else full[:, first:last]
    return data, sfreq, start - first, stop - start


def band_mean(freqs: np.ndarray, coh: np.ndarray) -> float:
    return float(coh[(freqs >= BAND[0]) & (freqs <= BAND[1])].mean())


def welch_coherence(x: np.ndarray, sfreq: float, seconds: float, window: str) -> float:
    nper = int(round(seconds * sfreq))
    freqs, coh = signal.coherence(x[0], x[1], fs=sfreq, window=window, nperseg=nper, noverlap=nper // 2)
    return band_mean(freqs, coh)


def multitaper_coherence(x: np.ndarray, sfreq: float) -> float:
    length = int(round(4 * sfreq))
    n_epochs = x.shape[1] // length
    epochs = x[:, : n_epochs * length].reshape(2, n_epochs, length)
    epochs = epochs - epochs.mean(axis=-1, keepdims=True)
    tapers = dpss(length, NW=2.0, Kmax=3)  # half-bandwidth 2 bins of 0.25 Hz: 1 Hz bandwidth
    spectra = np.fft.rfft(epochs[:, :, None, :] * tapers[None, None, :, :], axis=-1)
    freqs = np.fft.rfftfreq(length, 1 / sfreq)
    sxy = (spectra[0] * np.conj(spectra[1])).mean(axis=(0, 1))
    sxx = (np.abs(spectra[0]) ** 2).mean(axis=(0, 1))
    syy = (np.abs(spectra[1]) ** 2).mean(axis=(0, 1))
    return band_mean(freqs, np.abs(sxy) ** 2 / (sxx * syy))


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    padded, sfreq, offset, length = load(inputs[0], [params["channel_a"], params["channel_b"]],
                                         params["start_s"], params["end_s"])
    x = padded[:, offset:offset + length]
    values = {
        "welch2": welch_coherence(x, sfreq, 2.0, "hann"),
        "welch4": welch_coherence(x, sfreq, 4.0, "hann"),
        "welch1_hamming": welch_coherence(x, sfreq, 1.0, "hamming"),
        "multitaper_4s": multitaper_coherence(x, sfreq),
    }
    highpassed = mne.filter.filter_data(padded, sfreq, 1.0, None, verbose="ERROR")[:, offset:offset + length]
    values["hp1_welch2"] = welch_coherence(highpassed, sfreq, 2.0, "hann")
    return {"alpha_coherence": {name: round(value, 4) for name, value in sorted(values.items())}}
