"""Reference for fa_pipeline_line_noise_edf: screen, notch, filter, re-reference and export EEGMMIDB.

Pipeline on PhysioNet EEGMMIDB S001R02 (64 channels, 160 Hz, 61 s, eyes closed):
1. channel names in standard 10-10 spelling (dots removed, upper case but the 'p' of 'Fp' and
   a final 'z');
2. line-noise share of one channel over a stretch of the raw data: 10 log10(power 59-61 Hz /
   power 1-40 Hz);
3. MNE's default 60-Hz notch on the whole recording (raw.notch_filter(60)) and the attenuation of
   one channel's 59-61 Hz power over the stretch, in dB;
4. MNE's default FIR band-pass on the whole recording, average reference over the 64 channels,
   crop to the stretch (end excluded), export as EDF (file_check/cleaned_eeg.edf);
5. the RMS of one channel in the written file, and the relative power of a band (over 1-40 Hz,
   percent) averaged over a group of channels of the cleaned stretch.

The spectral estimator is left to the solver: the line share, the attenuation and the relative
power come from a method ensemble (Welch with 2-, 4- and 8-s Hann segments and 50% overlap,
and mne's multitaper with a 1-Hz bandwidth; band power is the area under the PSD,
trapezoidal rule).
"""
import os

import mne
import numpy as np
from scipy import signal

FILE_NAME = "file_check/cleaned_eeg.edf"
LINE = (59.0, 61.0)
BROAD = (1.0, 40.0)


def standard_name(name: str) -> str:
    """'Fc5.' -> 'FC5', 'Fpz.' -> 'Fpz', 'Afz.' -> 'AFz', 'Iz..' -> 'Iz'."""
    text = name.replace(".", "").upper()
    if text.startswith("FP"):
        text = "Fp" + text[2:]
    if text.endswith("Z"):
        text = text[:-1] + "z"
    return text


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    raw.rename_channels({name: standard_name(name) for name in raw.ch_names})
    names = list(raw.ch_names)
    sfreq = raw.info["sfreq"]
    start, stop = int(round(params["start_s"] * sfreq)), int(round(params["end_s"] * sfreq))
    before = raw.get_data(start=start, stop=stop) * 1e6

    raw.notch_filter(60.0, verbose="ERROR")
    notched = raw.get_data(start=start, stop=stop) * 1e6
    raw.filter(params["band_hz"][0], params["band_hz"][1], verbose="ERROR")
    raw.set_eeg_reference("average", projection=False, verbose="ERROR")
    raw.crop(tmin=start / sfreq, tmax=(stop - 1) / sfreq, include_tmax=True)
    os.makedirs("file_check", exist_ok=True)
    mne.export.export_raw(FILE_NAME, raw, fmt="edf", overwrite=True, verbose="ERROR")
    saved = mne.io.read_raw_edf(FILE_NAME, preload=True, verbose="ERROR")
    cleaned = saved.get_data() * 1e6

    probe = names.index(params["line_channel"])
    region = [names.index(ch) for ch in params["region"]]
    line_ratio, attenuation, relative = {}, {}, {}
    spectra_before = _spectra(before[[probe]], sfreq)
    spectra_notched = _spectra(notched[[probe]], sfreq)
    spectra_clean = _spectra(cleaned[region], sfreq)
    for pipeline, (freqs, psd) in spectra_before.items():
        line_power = _area(freqs, psd, LINE)[0]
        line_ratio[pipeline] = round(float(10 * np.log10(line_power / _area(freqs, psd, BROAD)[0])), 3)
        f2, p2 = spectra_notched[pipeline]
        attenuation[pipeline] = round(float(10 * np.log10(line_power / _area(f2, p2, LINE)[0])), 3)
        f3, p3 = spectra_clean[pipeline]
        rel = _area(f3, p3, tuple(params["rel_band_hz"])) / _area(f3, p3, BROAD)
        relative[pipeline] = round(float(100 * rel.mean()), 2)

    rms = float(np.sqrt(np.mean(cleaned[names.index(params["rms_channel"])] ** 2)))
    return {
        "artifact_path": FILE_NAME,
        "file_properties": {
            "artifact_path": FILE_NAME,
            "channel_count": len(saved.ch_names),
            "channel_names": list(saved.ch_names),
            "sfreq_hz": float(saved.info["sfreq"]),
            "n_samples": int(saved.n_times),
            "reference_mode": "average",
            "signal_rms": float(np.sqrt(np.mean(saved.get_data() ** 2))),
        },
        "line_ratio_db": line_ratio,
        "line_attenuation_db": attenuation,
        "rms_uv": round(rms, 2),
        "relative_power_pct": relative,
    }


def _spectra(x: np.ndarray, sfreq: float) -> dict:
    out = {}
    for seconds in (2, 4, 8):
        n = int(seconds * sfreq)
        out[f"welch_{seconds}s"] = signal.welch(x, fs=sfreq, window="hann", nperseg=n, noverlap=n // 2,
                                                detrend="constant", axis=-1)
    psd, freqs = mne.time_frequency.psd_array_multitaper(x - x.mean(axis=-1, keepdims=True), sfreq, bandwidth=1.0,
                                                      normalization="full", verbose="ERROR")
    out["multitaper_1hz"] = (freqs, psd)
    return out


def _area(freqs: np.ndarray, psd: np.ndarray, band: tuple) -> np.ndarray:
    inside = (freqs >= band[0]) & (freqs <= band[1])
    return np.trapezoid(psd[..., inside], freqs[inside], axis=-1)
