"""Per-stage reports: events counted per sleep stage and band power per stage."""
from __future__ import annotations

from typing import Any, Literal

import numpy as np

from braintools import refs
from braintools.errors import ToolError
from braintools.registry import result, tool
from braintools.tools.sleep_reports import epoch_of, hypnogram_entry, stage_labels, stages_or_all


@tool("sleep")
def events_per_stage(events: str, hypnogram: str, time_column: str = "onset_s", stages: list[str] | None = None) -> dict[str, object]:
    """Count events (e.g. detected slow waves or spindles) per sleep stage, and their density per minute of that stage.

    Each event goes to the scoring epoch whose interval [onset, onset + epoch length) holds
    its time (seconds from the recording's start, as the detectors report it); events in no
    epoch are counted as outside.

    Parameters
    ----------
    %(events)s
    hypnogram : str
        Id of a hypnogram of the same recording (one night).
    time_column : str, optional
        The column giving each event's time in seconds, e.g. "onset_s", "NegPeak" or "Peak".
    %(stages)s
    """
    table = refs.table(events, "events")
    hyp = hypnogram_entry(hypnogram)
    if len(table.frame) and time_column not in table.frame.columns:
        raise ToolError("bad_argument", f"time_column: no column {time_column!r}; columns: {list(table.frame.columns)}",
                        argument="time_column")
    times = table.frame[time_column].astype(float).to_numpy() if len(table.frame) else np.array([])
    pos = epoch_of(hyp, times)
    labels, epoch_min = stage_labels(hyp), float(hyp.meta["epoch_s"]) / 60.0
    out: dict[str, Any] = {}
    for s in stages_or_all(hyp, stages):
        minutes = int((labels == s).sum()) * epoch_min
        count = int(sum(1 for p in pos if p >= 0 and labels[p] == s))
        out[s] = {"count": count, "minutes": minutes, "per_min": count / minutes if minutes else None}
    return {"per_stage": result("events_per_stage", out, time_column=time_column, n_events=len(times),
                                outside=int((pos < 0).sum()))}


@tool("sleep")
def stage_band_power(source: str, hypnogram: str, band: list[float], stages: list[str] | None = None,
                     channel: str | None = None, method: Literal["welch", "multitaper"] = "welch", segment_s: float = 4.0,
                     overlap: float = 0.5, bandwidth_hz: float | None = None, max_ptp_uv: float | None = None) -> dict[str, object]:
    """Band power of one channel per scoring epoch, averaged over the epochs of each stage (µV²), skipping epochs with too large a peak-to-peak.

    An epoch is the signal's samples inside [onset, onset + epoch length) of a hypnogram row;
    epochs not wholly inside the signal are left out. Per epoch: PSD by Welch (Hann, nperseg
    = round(segment_s * sfreq), noverlap = floor(nperseg * overlap), density) or multitaper
    (mne.time_frequency.psd_array_multitaper, optional half-bandwidth), then band power =
    sum of the PSD over low <= f < high times the frequency step.

    Parameters
    ----------
    source : str
        Id of a signal (µV) of the hypnogram's recording.
    %(hypnogram_night)s
    %(band)s
    %(stages)s
    %(channel_one_channel_signal)s
    method : str, optional
        Spectral estimator.
    %(segment_s)s
    %(overlap)s
    bandwidth_hz : float, optional
        Multitaper bandwidth in Hz (default: MNE's).
    max_ptp_uv : float, optional
        Leave out an epoch whose peak-to-peak amplitude exceeds this (µV).
    """
    from scipy import signal as sps

    sig = refs.signal(source)
    hyp = hypnogram_entry(hypnogram)
    if channel is None and len(sig.ch_names) != 1:
        raise ToolError("bad_argument", f"channel: the signal has {len(sig.ch_names)} channels; name one", argument="channel")
    index = 0 if channel is None else refs.channel_indices(sig.ch_names, [channel], "channel")[0]
    if len(band) != 2 or not 0 <= band[0] < band[1]:
        raise ToolError("bad_argument", "band: a range is [low, high] with 0 <= low < high", argument="band")
    if not 0 <= overlap < 1 or segment_s <= 0:
        raise ToolError("bad_argument", "segment_s/overlap: need segment_s > 0 and 0 <= overlap < 1", argument="overlap")
    x, sf = sig.data[index], sig.sfreq
    length = int(round(float(hyp.meta["epoch_s"]) * sf))
    labels = stage_labels(hyp)
    onsets = hyp.frame["onset_s"].astype(float).to_numpy()
    names = stages_or_all(hyp, stages)
    out: dict[str, Any] = {}
    for s in names:
        powers, excluded, outside = [], 0, 0
        for pos in np.flatnonzero(labels == s):
            start = int(round((onsets[pos] - sig.start_s) * sf))
            if start < 0 or start + length > len(x):
                outside += 1
                continue
            seg = x[start:start + length]
            if max_ptp_uv is not None and np.ptp(seg) > max_ptp_uv:
                excluded += 1
                continue
            powers.append(_band(seg, sf, band, method, segment_s, overlap, bandwidth_hz, sps))
        out[s] = {"power": float(np.mean(powers)) if powers else None, "n_epochs": len(powers), "n_excluded": excluded,
                  "n_outside": outside}
    return {"band_power": result("stage_band_power", out, band=band, method=method, channel=sig.ch_names[index])}


def _band(seg: np.ndarray, sf: float, band: list[float], method: str, segment_s: float, overlap: float,
          bandwidth_hz: float | None, sps: Any) -> float:
    if method == "welch":
        nperseg = int(round(segment_s * sf))
        if nperseg > len(seg):
            raise ToolError("bad_argument", f"segment_s: {segment_s} s is longer than an epoch", argument="segment_s")
        freqs, psd = sps.welch(seg, sf, window="hann", nperseg=nperseg, noverlap=int(nperseg * overlap))
    else:
        from mne.time_frequency import psd_array_multitaper

        psd, freqs = psd_array_multitaper(seg, sf, bandwidth=bandwidth_hz, normalization="full", verbose="ERROR")
    step = float(freqs[1] - freqs[0])
    return float(psd[(freqs >= band[0]) & (freqs < band[1])].sum() * step)
