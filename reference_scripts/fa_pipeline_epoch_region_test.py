"""Reference for fa_pipeline_epoch_region_test: epoch a stretch, reject, compare two regions.

Pipeline on one stretch of a pylossless 128-channel EDF (256 Hz, stored band-limited to about
1-30 Hz) and its BIDS events file:
1. consecutive 2-s epochs from the stretch's start (whole epochs only), on the channels of two
   regions, in microvolts;
2. drop the epochs that overlap a span annotated as bad in the events file (trial_type starting
   with "bad", any case; the span is [onset, onset + duration] in seconds, the epoch
   [start, start + 2) s);
3. drop the epochs whose peak-to-peak amplitude exceeds a limit on any channel of the regions;
4. per kept epoch and channel, band power in dB (10 log10 of the area under the PSD, µV²), the
   mean over each region's channels, and the region difference A - B per epoch;
5. a two-sided Wilcoxon signed-rank test of the per-epoch differences (scipy's default), the
   verdict p < 0.05, and the per-epoch table written as file_check/epoch_band_power.csv.

The per-epoch spectral estimator is left to the solver: the mean difference and the verdict
come from a method ensemble (Hann periodogram of the epoch, Welch with 1-s Hann segments and
50% overlap, mne's multitaper with a 2-Hz bandwidth, and Welch with 1-s Hamming segments
and 75% overlap). The counts and the table's shape do not depend on it.
"""
import os

import mne
import numpy as np
import pandas as pd
from scipy import signal, stats

EPOCH_S = 2.0
FILE_NAME = "file_check/epoch_band_power.csv"
COLUMNS = ["epoch_start_s", "region_a_db", "region_b_db", "difference_db"]


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=False, verbose="ERROR")
    sfreq = raw.info["sfreq"]
    chans_a, chans_b = params["region_a"], params["region_b"]
    picks = [raw.ch_names.index(ch) for ch in chans_a + chans_b]
    start_s, end_s = params["start_s"], params["end_s"]
    first = int(round(start_s * sfreq))
    length = int(round(EPOCH_S * sfreq))
    n_epochs = int((int(round(end_s * sfreq)) - first) // length)
    data = raw.get_data(picks=picks, start=first, stop=first + n_epochs * length) * 1e6
    epochs = data.reshape(len(picks), n_epochs, length).transpose(1, 0, 2)
    starts = start_s + EPOCH_S * np.arange(n_epochs)

    events = pd.read_csv(inputs[1], sep="\t", encoding="utf-8-sig")
    bad = events[events["trial_type"].astype(str).str.lower().str.startswith("bad")]
    spans = bad[["onset", "duration"]].to_numpy(float)
    overlaps = np.array([bool(((spans[:, 0] < s + EPOCH_S) & (spans[:, 0] + spans[:, 1] > s)).any())
                         for s in starts])
    edges = np.concatenate([starts, starts + EPOCH_S])
    ends = np.concatenate([spans[:, 0], spans[:, 0] + spans[:, 1]])
    if (np.abs(edges[:, None] - ends[None, :]) < 0.02).any():
        raise ValueError("fa_pipeline_epoch_region_test: a bad span starts or ends at an epoch edge")
    ptp = np.ptp(epochs, axis=2).max(axis=1)
    too_large = (~overlaps) & (ptp > params["ptp_uv"])
    keep = ~overlaps & ~too_large
    _check_margin(ptp[~overlaps], params["ptp_uv"])
    kept, kept_starts = epochs[keep], starts[keep]
    if len(kept) < 10:
        raise ValueError(f"fa_pipeline_epoch_region_test: only {len(kept)} epochs kept")

    n_a = len(chans_a)
    diff, verdict, mean_a = {}, {}, {}
    table = None
    for pipeline, (freqs, psd) in _spectra(kept, sfreq).items():
        inside = (freqs >= params["band_hz"][0]) & (freqs <= params["band_hz"][1])
        power_db = 10 * np.log10(np.trapezoid(psd[..., inside], freqs[inside], axis=-1))  # (epochs, channels)
        a, b = power_db[:, :n_a].mean(axis=1), power_db[:, n_a:].mean(axis=1)
        d = a - b
        p = stats.wilcoxon(d).pvalue
        diff[pipeline] = round(float(d.mean()), 3)
        verdict[pipeline] = "yes" if p < 0.05 else "no"
        mean_a[pipeline] = round(float(a.mean()), 3)
        if table is None:
            table = pd.DataFrame({"epoch_start_s": kept_starts, "region_a_db": a, "region_b_db": b,
                                  "difference_db": d}, columns=COLUMNS)
    os.makedirs("file_check", exist_ok=True)
    table.round(4).to_csv(FILE_NAME, index=False)

    return {
        "artifact_path": FILE_NAME,
        "file_properties": {"artifact_path": FILE_NAME, "row_count": int(keep.sum()), "column_names": COLUMNS},
        "n_epochs_annotated": int(overlaps.sum()),
        "n_epochs_kept": int(keep.sum()),
        "mean_region_a_db": mean_a,
        "mean_difference_db": diff,
        "significant": verdict,
    }


def _check_margin(ptp: np.ndarray, limit: float) -> None:
    """Refuse a limit that an epoch's peak-to-peak nearly equals (rounding could flip it)."""
    close = np.abs(ptp - limit) < 0.5
    if close.any():
        raise ValueError(f"fa_pipeline_epoch_region_test: an epoch's peak-to-peak lies within 0.5 uV of {limit}")


def _spectra(epochs: np.ndarray, sfreq: float) -> dict:
    """{pipeline: (freqs, psd of shape (epochs, channels, freqs))}, densities in µV²/Hz."""
    n = int(sfreq)
    out = {
        "periodogram_hann": signal.periodogram(epochs, fs=sfreq, window="hann", detrend="constant", axis=-1),
        "welch_1s_hann": signal.welch(epochs, fs=sfreq, window="hann", nperseg=n, noverlap=n // 2,
                                      detrend="constant", axis=-1),
        "welch_1s_hamming_75": signal.welch(epochs, fs=sfreq, window="hamming", nperseg=n, noverlap=3 * n // 4,
                                            detrend="constant", axis=-1),
    }
    centred = epochs - epochs.mean(axis=-1, keepdims=True)
    psd, freqs = mne.time_frequency.psd_array_multitaper(centred, sfreq, bandwidth=2.0, normalization="full",
                                                      verbose="ERROR")
    out["multitaper"] = (freqs, psd)
    return out
