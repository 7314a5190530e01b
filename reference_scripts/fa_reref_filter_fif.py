"""Reference for fa_reref_filter_fif: re-reference, band-pass, crop and save the EEG as FIF.

MNE sample excerpt: keep the EEG channels except the known bad 'EEG 053', drop the stored
SSP projectors unapplied, re-reference (average or one channel), band-pass with MNE's
default FIR filter, crop, write file_check/preprocessed_eeg_raw.fif and report the file's properties and one
channel's RMS amplitude in the written data.
"""
import os

import mne
import numpy as np

FILE_NAME = "file_check/preprocessed_eeg_raw.fif"  # fixed: the metric names it per task


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_fif(inputs[0], preload=True, verbose="ERROR")
    eeg = [name for name, kind in zip(raw.ch_names, raw.get_channel_types())
           if kind == "eeg" and name != "EEG 053"]
    raw.pick(eeg)
    raw.del_proj()  # the stored projectors are discarded, never applied
    raw.info["bads"] = []
    ref = params["reference"]
    raw.set_eeg_reference("average" if ref == "average" else [ref], projection=False,
                          verbose="ERROR")
    low, high = params["band_hz"]
    raw.filter(l_freq=low, h_freq=high, verbose="ERROR")
    raw.crop(tmin=params["crop_s"][0], tmax=params["crop_s"][1])
    path = FILE_NAME
    os.makedirs("file_check", exist_ok=True)
    raw.save(path, overwrite=True, verbose="ERROR")
    saved = mne.io.read_raw_fif(path, preload=True, verbose="ERROR")
    x = saved.get_data(picks=[params["channel"]])[0] * 1e6
    return {
        "artifact_path": path,
        "file_properties": {
            "artifact_path": path,
            "channel_count": len(saved.ch_names),
            "sfreq_hz": round(float(saved.info["sfreq"]), 3),
            "duration_sec": round(float(saved.n_times / saved.info["sfreq"]), 3),
            "n_samples": int(saved.n_times),
        },
        "rms_uv": round(float(np.sqrt(np.mean(x ** 2))), 3),
    }
