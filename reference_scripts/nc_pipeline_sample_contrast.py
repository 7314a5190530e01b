"""Reference for nc_pipeline_sample_contrast: a two-condition ERP study of the MNE sample excerpt.

The pipeline, each stage scored:
1. preparation: the 59 good EEG channels (all but 'EEG 053') and 'EOG 061'; the stored SSP
   projectors dropped unapplied; the EEG re-referenced to its average; the EEG band-pass
   filtered with MNE's default FIR filter (raw.filter; the EOG stays unfiltered, as raw.filter's
   default picks leave it);
2. epochs -0.2..0.5 s around the STI 014 events of the two conditions (samples -120..300 at
   600.615 Hz), baseline epoch start..0 s, rejection by peak-to-peak on the EOG channel and on
   any EEG channel: kept epochs per condition;
3. condition averages, the channel-cluster mean over a latency window per condition and their
   difference;
4. the single-trial cluster window means compared by a two-sided test at alpha 0.05. The test
   is the agent's choice, so the verdict is a method ensemble (Welch t, Student t,
   Mann-Whitney U, permutation of the mean difference); a binding whose tests disagree makes no
   instance;
5. files: the difference wave as a PNG figure and the kept epochs as a NumPy array (µV).
"""
import os
import struct
import zlib

import mne
import numpy as np
from scipy import stats

TMIN, TMAX = -0.2, 0.5
ALPHA = 0.05
N_PERMUTATIONS = 5000
FIGURE = "file_check/difference_wave.png"
EPOCHS_FILE = "file_check/clean_epochs.npy"


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_fif(inputs[0], preload=False, verbose="ERROR")
    events = mne.find_events(raw, stim_channel="STI 014", verbose="ERROR")
    raw.del_proj()
    eeg = [c for c, kind in zip(raw.ch_names, raw.get_channel_types()) if kind == "eeg" and c != "EEG 053"]
    raw.pick(eeg + ["EOG 061"])
    raw.load_data(verbose="ERROR")
    raw.info["bads"] = []
    raw.set_eeg_reference("average", projection=False, verbose="ERROR")
    raw.filter(params["band_hz"][0], params["band_hz"][1], verbose="ERROR")  # EEG only (default picks)

    codes_a, codes_b = params["codes_a"], params["codes_b"]
    chosen = events[np.isin(events[:, 2], codes_a + codes_b)]
    epochs = mne.Epochs(raw, chosen, event_id=None, tmin=TMIN, tmax=TMAX, baseline=(None, 0),
                        reject={"eeg": params["eeg_reject_uv"] * 1e-6, "eog": params["eog_reject_uv"] * 1e-6},
                        reject_by_annotation=False, preload=True, verbose="ERROR")
    data = epochs.get_data(picks=eeg) * 1e6  # kept epochs x 59 EEG x samples, µV
    codes = epochs.events[:, 2]
    in_a, in_b = np.isin(codes, codes_a), np.isin(codes, codes_b)
    cluster = [eeg.index(c) for c in params["channels"]]
    t_ms = epochs.times * 1000.0
    window = (t_ms >= params["window_ms"][0]) & (t_ms <= params["window_ms"][1])
    wave_a = data[in_a][:, cluster].mean(axis=(0, 1))
    wave_b = data[in_b][:, cluster].mean(axis=(0, 1))
    trials_a = data[in_a][:, cluster][:, :, window].mean(axis=(1, 2))
    trials_b = data[in_b][:, cluster][:, :, window].mean(axis=(1, 2))
    amp_a, amp_b = float(wave_a[window].mean()), float(wave_b[window].mean())

    os.makedirs("file_check", exist_ok=True)
    np.save(EPOCHS_FILE, data)
    _line_png(FIGURE, wave_a - wave_b, int(np.argmin(np.abs(epochs.times))))
    return {
        "n_kept_a": int(in_a.sum()),
        "n_kept_b": int(in_b.sum()),
        "amplitude_a_uv": _round(amp_a, 2),
        "amplitude_b_uv": _round(amp_b, 2),
        "difference_uv": _round(amp_a - amp_b, 2),
        "significant": _verdicts(trials_a, trials_b),
        "figure_path": FIGURE,
        "figure_properties": {"artifact_path": FIGURE, "format": "png"},
        "epochs_path": EPOCHS_FILE,
        "epochs_properties": {"artifact_path": EPOCHS_FILE, "npy_shape": list(data.shape),
                              "signal_rms": round(float(np.sqrt(np.mean(data ** 2))), 4)},
    }


def _round(value: float, decimals: int) -> float:
    """Python's round, without a negative zero."""
    return round(float(value), decimals) + 0.0

def _verdicts(a: np.ndarray, b: np.ndarray) -> dict:
    """'yes'/'no' (two-sided p < alpha) of each defensible two-sample test."""
    p_values = {
        "welch_t": stats.ttest_ind(a, b, equal_var=False).pvalue,
        "student_t": stats.ttest_ind(a, b, equal_var=True).pvalue,
        "mann_whitney_u": stats.mannwhitneyu(a, b, alternative="two-sided").pvalue,
        "permutation_mean": _permutation_p(a, b),
    }
    return {name: "yes" if float(p) < ALPHA else "no" for name, p in p_values.items()}


def _permutation_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided permutation p of the difference of means (seeded random relabellings)."""
    rng = np.random.default_rng(0)
    shuffled = rng.permuted(np.tile(np.concatenate([a, b]), (N_PERMUTATIONS, 1)), axis=1)
    diffs = np.abs(shuffled[:, :len(a)].mean(axis=1) - shuffled[:, len(a):].mean(axis=1))
    hits = int((diffs >= abs(a.mean() - b.mean()) - 1e-12).sum())
    return (hits + 1) / (N_PERMUTATIONS + 1)


def _line_png(path: str, trace: np.ndarray, onset: int, width: int = 640, height: int = 320) -> None:
    """A plain line plot (black trace; grey zero line and onset line) as a grey-scale PNG, built with zlib."""
    image = np.full((height, width), 255, np.uint8)
    span = float(np.max(np.abs(trace))) or 1.0
    rows = np.round((height - 1) / 2 - trace / span * (height * 0.45)).astype(int)
    cols = np.round(np.linspace(0, width - 1, len(trace))).astype(int)
    image[(height - 1) // 2, :] = 170
    image[:, cols[onset]] = 170
    for k in range(len(trace) - 1):
        steps = max(abs(rows[k + 1] - rows[k]), abs(cols[k + 1] - cols[k]), 1)
        rr = np.round(np.linspace(rows[k], rows[k + 1], steps + 1)).astype(int)
        cc = np.round(np.linspace(cols[k], cols[k + 1], steps + 1)).astype(int)
        image[np.clip(rr, 0, height - 1), cc] = 0
    raw_rows = b"".join(b"\x00" + row.tobytes() for row in image)

    def chunk(tag: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw_rows, 9)) + chunk(b"IEND", b""))
    with open(path, "wb") as handle:
        handle.write(png)
