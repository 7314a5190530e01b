"""Reference for fa_alpha_peak_frequency: the individual alpha frequency (IAF), the frequency
of the alpha peak of the power spectrum over a channel group and window, from a method ensemble.

The question fixes the channels, the window and the search range (7-13 Hz); the estimator is
the analyst's choice. Pipelines (each returns the peak frequency in Hz):
- welch4_mean_spectrum: Welch (4-s Hann segments, 50 % overlap), spectra averaged over the
  channels, the largest bin in 7-13 Hz;
- welch4_channel_peaks: the same spectra, each channel's largest bin, averaged over channels;
- welch2_parabolic: Welch with 2-s segments, averaged spectrum, the largest bin refined by a
  parabola through the log power of it and its two neighbours;
- multitaper: DPSS multitaper over the whole window (MNE's defaults), averaged spectrum,
  largest bin;
- welch4_aperiodic_removed: the averaged Welch 4-s spectrum minus its aperiodic fit (a line
  in log-log coordinates fitted over 2-40 Hz without 7-14 Hz), the largest residual in
  7-13 Hz;
- welch8_mean_spectrum (windows of at least 16 s): Welch with 8-s segments, averaged
  spectrum, largest bin.
Where there is no clear alpha peak, the pipelines land on different bins (often the edges of
the search range) and the ensemble's spread rejects the binding.
"""
import h5py
import mne
import numpy as np
from scipy import signal

LOW, HIGH = 7.0, 13.0


def load(path: str, channels: list[str], start_s: float, end_s: float) -> tuple[np.ndarray, float]:
    """The window's samples (channels x samples) and the sampling rate."""
    if path.endswith(".h5"):
        sfreq = 1000.0
        start, stop = int(round(start_s * sfreq)), int(round(end_s * sfreq))
        with h5py.File(path, "r") as handle:
            (device,) = list(handle.keys())
            data = handle[f"{device}/raw/channel_1"][start:stop, 0].astype(float)[None, :]
        return data, sfreq
    raw = mne.io.read_raw(path, preload=False, verbose="ERROR")
    sfreq = float(raw.info["sfreq"])
    start, stop = int(round(start_s * sfreq)), int(round(end_s * sfreq))
    if not 0 <= start < stop <= raw.n_times:
        raise ValueError(f"window {start_s}-{end_s} s outside the recording")
    return raw.get_data(picks=channels, start=start, stop=stop) * 1e6, sfreq


def welch(x: np.ndarray, sfreq: float, seconds: float) -> tuple[np.ndarray, np.ndarray]:
    nper = int(round(seconds * sfreq))
    return signal.welch(x, fs=sfreq, window="hann", nperseg=nper, noverlap=nper // 2, detrend="constant", axis=-1)


def argmax_in_band(freqs: np.ndarray, power: np.ndarray) -> tuple[float, int]:
    """(frequency, index into freqs) of the largest value with LOW <= f <= HIGH."""
    idx = np.flatnonzero((freqs >= LOW) & (freqs <= HIGH))
    best = idx[int(np.argmax(power[idx]))]
    return float(freqs[best]), int(best)


def aperiodic_residual(freqs: np.ndarray, power: np.ndarray) -> np.ndarray:
    """log10 power minus a straight-line fit in log-log coordinates (2-40 Hz, 7-14 Hz left out)."""
    fit = (freqs >= 2) & (freqs <= 40) & ~((freqs >= 7) & (freqs <= 14))
    slope, offset = np.polyfit(np.log10(freqs[fit]), np.log10(power[fit]), 1)
    with np.errstate(divide="ignore"):
        return np.log10(power) - (offset + slope * np.log10(freqs))


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    x, sfreq = load(inputs[0], params["channels"], params["start_s"], params["end_s"])
    x = x - x.mean(axis=1, keepdims=True)
    peaks = {}
    freqs, psd = welch(x, sfreq, 4.0)
    peaks["welch4_mean_spectrum"] = argmax_in_band(freqs, psd.mean(axis=0))[0]
    peaks["welch4_channel_peaks"] = float(np.mean([argmax_in_band(freqs, p)[0] for p in psd]))
    peaks["welch4_aperiodic_removed"] = argmax_in_band(freqs, aperiodic_residual(freqs, psd.mean(axis=0)))[0]
    freqs, psd = welch(x, sfreq, 2.0)
    mean = np.log(psd.mean(axis=0))
    f0, i = argmax_in_band(freqs, mean)
    a, b, c = mean[i - 1], mean[i], mean[i + 1]
    shift = 0.5 * (a - c) / (a - 2 * b + c)
    peaks["welch2_parabolic"] = float(f0 + shift * (freqs[1] - freqs[0]))
    psd, freqs = mne.time_frequency.psd_array_multitaper(x, sfreq, fmin=1.0, fmax=45.0, verbose="ERROR")
    peaks["multitaper"] = argmax_in_band(freqs, psd.mean(axis=0))[0]
    if x.shape[1] >= 16 * sfreq:
        freqs, psd = welch(x, sfreq, 8.0)
        peaks["welch8_mean_spectrum"] = argmax_in_band(freqs, psd.mean(axis=0))[0]
    return {"iaf_hz": {name: round(value, 3) for name, value in sorted(peaks.items())}}
