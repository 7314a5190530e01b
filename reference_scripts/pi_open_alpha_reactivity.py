"""Reference for pi_open_alpha_reactivity: the alpha reactivity between an eyes-closed and an
eyes-open window of the PLUX single-lead EEG, as the alpha power of window A over window B in dB,
by a method ensemble.

channel_1 is the EEG (uint16 ADC counts, cast to float), channel_5 the protocol marker (its low
level, below 38000, coincides with the high-alpha blocks: eyes closed). Both windows must lie
inside one marker block each, of opposite levels, or the binding is refused.

Alpha power (8-13 Hz, both edges included) of each window, by six pipelines an analyst could
defend: Welch with 2-s Hann segments (bin sum), Welch with 4-s Hamming segments (trapezoid, as
MNE's psd_array_welch users often integrate), Welch with 1-s Hann segments, a DPSS multitaper
spectrum (1-Hz bandwidth), and the mean square in the window of the whole recording band-passed
8-13 Hz, by a zero-phase 4th-order Butterworth or by MNE's default FIR. (A single Hann-tapered
periodogram of the window was left out: its taper weights the window's middle, so with alpha
coming in bursts it measured a different quantity, up to 2.8 dB off the others.)
alpha_ratio_db = 10 log10(A / B) per pipeline (positive when A is the eyes-closed window).
eyes_closed_window per pipeline is the window with more alpha; the marker's answer joins the
ensemble as a check, so a binding where the EEG and the protocol disagree is rejected rather
than scored.
"""
import h5py
import mne
import numpy as np
from scipy import signal

FS = 1000
MARKER_MID = 38000
BAND = (8.0, 13.0)


def _band_sum(freqs, psd, df=None):
    keep = (freqs >= BAND[0]) & (freqs <= BAND[1])
    return float(psd[keep].sum() * (df if df is not None else freqs[1] - freqs[0]))


def _alpha_powers(x, alpha_traces):
    """Alpha power of one window (mean removed) under each pipeline."""
    x = x - x.mean()
    out = {}
    f, p = signal.welch(x, fs=FS, window="hann", nperseg=2 * FS, noverlap=FS)
    out["welch_2s_hann_sum"] = _band_sum(f, p)
    f, p = signal.welch(x, fs=FS, window="hamming", nperseg=4 * FS, noverlap=2 * FS)
    keep = (f >= BAND[0]) & (f <= BAND[1])
    out["welch_4s_hamming_trapz"] = float(np.trapezoid(p[keep], f[keep]))
    f, p = signal.welch(x, fs=FS, window="hann", nperseg=FS, noverlap=FS // 2)
    out["welch_1s_hann_sum"] = _band_sum(f, p)
    p, f = mne.time_frequency.psd_array_multitaper(x, FS, fmin=1.0, fmax=40.0, bandwidth=1.0, verbose="ERROR")
    out["multitaper_1hz"] = _band_sum(f, p)
    out["butterworth_bandpass_power"] = float(np.mean(alpha_traces[0] ** 2))
    out["fir_bandpass_power"] = float(np.mean(alpha_traces[1] ** 2))
    return out


def _window(params, name, n):
    start, end = int(round(params[f"{name}_start"] * FS)), int(round(params[f"{name}_end"] * FS))
    if not 0 <= start < end <= n:
        raise ValueError(f"pi_open_alpha_reactivity: window {name.upper()} is outside the recording")
    return start, end


def run(inputs: list[str], params: dict) -> dict:
    with h5py.File(inputs[0], "r") as handle:
        (device,) = list(handle.keys())
        eeg = handle[f"{device}/raw/channel_1"][:, 0].astype(float)
        marker = handle[f"{device}/raw/channel_5"][:, 0].astype(float)
    sos = signal.butter(4, BAND, btype="bandpass", fs=FS, output="sos")
    iir = signal.sosfiltfilt(sos, eeg - eeg.mean())
    fir = mne.filter.filter_data(eeg - eeg.mean(), FS, BAND[0], BAND[1], verbose="ERROR")
    powers, closed = {}, {}
    for name in ("a", "b"):
        start, end = _window(params, name, eeg.size)
        low = marker[start:end] < MARKER_MID
        if low.any() and not low.all():
            raise ValueError(f"pi_open_alpha_reactivity: window {name.upper()} spans a marker change")
        closed[name] = bool(low[0])
        powers[name] = _alpha_powers(eeg[start:end], (iir[start:end], fir[start:end]))
    if closed["a"] == closed["b"]:
        raise ValueError("pi_open_alpha_reactivity: the windows must be one eyes-closed and one eyes-open")
    ratio, which = {}, {}
    for pipeline in powers["a"]:
        pa, pb = powers["a"][pipeline], powers["b"][pipeline]
        ratio[pipeline] = round(float(10 * np.log10(pa / pb)), 3)
        which[pipeline] = "A" if pa > pb else "B"
    which["marker_check"] = "A" if closed["a"] else "B"
    # Pipelines in name order, so the record reads the same however the result was stored.
    return {"alpha_ratio_db": dict(sorted(ratio.items())), "eyes_closed_window": dict(sorted(which.items()))}
