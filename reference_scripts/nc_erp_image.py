"""Reference for nc_erp_image: an ERP image (trials x time) of one channel, written as a PNG.

pylossless face/house data: average reference over all 128 channels, epochs -0.2..0.5 s around
the `sample` onsets, baseline epoch start..0 s, no rejection, no extra filtering. The figure
is drawn without matplotlib (a grey-scale PNG built with zlib) so the script needs only the
allowed libraries; its look is not scored, only that the file exists. The numbers reported
beside it are the deterministic part of the task.
"""
import os
import struct
import zlib

import mne
import numpy as np
import pandas as pd

TMIN, TMAX = -0.2, 0.5
SCALE = 3  # pixels per trial and per sample, so the image is readable


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    raw.set_eeg_reference("average", projection=False, verbose="ERROR")
    events = pd.read_csv(inputs[1], sep="\t", encoding="utf-8-sig")
    onsets = events.loc[events["trial_type"].isin(params["trial_types"]), "sample"].to_numpy(dtype=int)
    if onsets.size == 0:
        raise ValueError(f"nc_erp_image: no events of trial_type {params['trial_types']}")
    mne_events = np.column_stack([onsets, np.zeros_like(onsets), np.ones_like(onsets)])
    epochs = mne.Epochs(
        raw, mne_events, tmin=TMIN, tmax=TMAX, baseline=(None, 0), picks=[params["channel"]],
        reject=None, flat=None, reject_by_annotation=False, preload=True, verbose="ERROR",
    )
    data = epochs.get_data()[:, 0, :] * 1e6
    times_ms = epochs.times * 1000.0
    low, high = params["window_ms"]
    inside = (times_ms >= low) & (times_ms <= high)
    trial_means = data[:, inside].mean(axis=1)
    path = os.path.join("file_check", params["file_name"])
    _write_png(path, data)
    return {
        "artifact": path,
        "artifact_properties": {"artifact_path": path, "format": "png"},
        "n_trials": int(data.shape[0]),
        "window_mean_uv": round(float(trial_means.mean()), 2),
        "percent_negative_trials": round(100.0 * float(np.mean(trial_means < 0)), 1),
    }


def _write_png(path: str, data: np.ndarray) -> None:
    """Trials as rows, time as columns; grey levels span +/- the 98th percentile of |data|."""
    limit = float(np.percentile(np.abs(data), 98)) or 1.0
    grey = np.clip((data / limit + 1.0) * 127.5, 0, 255).astype(np.uint8)
    grey = np.repeat(np.repeat(grey, SCALE, axis=0), SCALE, axis=1)
    height, width = grey.shape
    rows = b"".join(b"\x00" + row.tobytes() for row in grey)

    def chunk(tag: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + tag + body
                + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF))

    png = (b"\x89PNG\r\n\x1a\n"
           + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(png)
