"""Sleep from the signal: automatic staging (YASA), slow waves and spindles, and band power in chosen epochs."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from braintools import refs
from braintools.data import Table
from braintools.errors import ToolError
from braintools.registry import New, result, tool


@tool("sleep")
def auto_stage(recording: str, eeg_name: str, eog_name: str | None = None, emg_name: str | None = None,
               epoch_s: float = 30.0) -> dict[str, object]:
    """Automatic sleep staging with yasa.SleepStaging (its pre-trained model) on a recording read by MNE, as a hypnogram.

    Labels are YASA's: WAKE, N1, N2, N3, REM; one per 30-s epoch from the start of the recording.

    Parameters
    ----------
    recording : str
        Id of a recording (EDF/FIF... read by MNE), used as stored.
    eeg_name : str
        The EEG channel.
    eog_name : str, optional
        An EOG channel (omit to stage without one).
    emg_name : str, optional
        An EMG channel (omit to stage without one).
    epoch_s : float, optional
        Epoch length recorded in the hypnogram (YASA stages 30-s epochs).
    """
    import warnings

    import yasa  # type: ignore[import-untyped]

    rec = refs.recording(recording)
    if rec.raw is None:
        raise ToolError("unsupported", "recording: auto_stage needs a file MNE reads", argument="recording")
    for name, argument in ((eeg_name, "eeg_name"), (eog_name, "eog_name"), (emg_name, "emg_name")):
        if name is not None and name not in rec.ch_names:
            raise ToolError("unknown_channel", f"{argument}: no channel {name!r}", argument=argument)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        staging = yasa.SleepStaging(rec.raw.copy().load_data(verbose="ERROR"), eeg_name=eeg_name, eog_name=eog_name, emg_name=emg_name)
        hypno = staging.predict()
    stages = [str(x) for x in getattr(hypno, "hypno", hypno)]
    frame = pd.DataFrame({"epoch": np.arange(1, len(stages) + 1), "onset_s": np.arange(len(stages)) * epoch_s,
                          "stage": stages, "code": stages})
    meta = {"epoch_s": epoch_s, "labels": ["WAKE", "N1", "N2", "N3", "REM"], "n_epochs": len(stages), "scorer": "yasa"}
    return {"hypnogram": New("labels", "lab", Table(frame, "hypnogram", meta))}


def _one_channel(source: str, channel: str | None) -> tuple[np.ndarray, float, str]:
    sig = refs.signal(source)
    if channel is None and len(sig.ch_names) != 1:
        raise ToolError("bad_argument", f"channel: the signal has {len(sig.ch_names)} channels; name one", argument="channel")
    index = 0 if channel is None else refs.channel_indices(sig.ch_names, [channel], "channel")[0]
    return sig.data[index], sig.sfreq, sig.ch_names[index]


def _detections(found: Any, name: str, start_s: float, what: str) -> dict[str, object]:
    frame = found.summary() if found is not None else pd.DataFrame()
    if len(frame):
        for column in ("Start", "Peak", "End", "NegPeak", "MidCrossing", "PosPeak"):
            if column in frame.columns:
                frame[column] = frame[column] + start_s
        frame.insert(0, "onset_s", frame["Start"])
        frame.insert(1, "channel", name)
    numeric = frame.select_dtypes("number").drop(columns=["onset_s", "Start", "End", "Peak", "NegPeak", "MidCrossing",
                                                          "PosPeak", "IdxChannel"], errors="ignore")
    summary = {"n": len(frame), "mean": {str(k): float(v) for k, v in numeric.mean().items()} if len(frame) else {}}
    return {"events": New("events", "evt", Table(frame.reset_index(drop=True), what, {"channel": name})),
            "summary": result(what, summary, channel=name)}


@tool("sleep")
def detect_slow_waves(source: str, channel: str | None = None, freq_sw: list[float] | None = None,
                      dur_neg: list[float] | None = None, dur_pos: list[float] | None = None,
                      amp_neg: list[float] | None = None, amp_pos: list[float] | None = None,
                      amp_ptp: list[float] | None = None, coupling: bool = False,
                      remove_outliers: bool = False) -> dict[str, object]:
    """Slow waves with yasa.sw_detect on one channel (µV), as an events table and a summary (count, mean of each property).

    Ranges left out take yasa.sw_detect's defaults. Event times are seconds from the recording's start.

    Parameters
    ----------
    %(source_uv)s
    %(channel_one_channel_signal)s
    freq_sw : list of float, optional
        Slow-wave band [low, high] in Hz.
    dur_neg : list of float, optional
        Duration range of the negative deflection in seconds.
    dur_pos : list of float, optional
        Duration range of the positive deflection in seconds.
    amp_neg : list of float, optional
        Amplitude range of the negative peak in µV.
    amp_pos : list of float, optional
        Amplitude range of the positive peak in µV.
    amp_ptp : list of float, optional
        Peak-to-peak amplitude range in µV.
    coupling : bool, optional
        Compute phase-amplitude coupling with spindles.
    %(remove_outliers)s
    """
    import yasa

    x, sfreq, name = _one_channel(source, channel)
    ranges = {"freq_sw": freq_sw, "dur_neg": dur_neg, "dur_pos": dur_pos, "amp_neg": amp_neg, "amp_pos": amp_pos,
              "amp_ptp": amp_ptp}
    kwargs = {k: tuple(_pair(v, k)) for k, v in ranges.items() if v is not None}
    found = yasa.sw_detect(x, sfreq, coupling=coupling, remove_outliers=remove_outliers, verbose="ERROR", **kwargs)
    return _detections(found, name, refs.signal(source).start_s, "slow_waves")


@tool("sleep")
def detect_spindles(source: str, channel: str | None = None, freq_sp: list[float] | None = None,
                    freq_broad: list[float] | None = None, duration: list[float] | None = None,
                    min_distance_ms: float = 500.0, rel_pow: float | None = None, corr: float | None = None,
                    rms: float | None = None, remove_outliers: bool = False) -> dict[str, object]:
    """Sleep spindles with yasa.spindles_detect on one channel (µV), as an events table and a summary.

    Settings left out take yasa.spindles_detect's defaults; a threshold given as null is not used.

    Parameters
    ----------
    %(source_uv)s
    %(channel_one_channel_signal)s
    freq_sp : list of float, optional
        Spindle band [low, high] in Hz.
    freq_broad : list of float, optional
        Broad band [low, high] in Hz for the relative power.
    duration : list of float, optional
        Duration range in seconds.
    min_distance_ms : float, optional
        Spindles closer than this are merged.
    rel_pow : float, optional
        Relative power threshold.
    corr : float, optional
        Moving correlation threshold.
    rms : float, optional
        Moving RMS threshold (in standard deviations).
    %(remove_outliers)s
    """
    import yasa

    x, sfreq, name = _one_channel(source, channel)
    kwargs: dict[str, Any] = {k: tuple(_pair(v, k)) for k, v in
                              {"freq_sp": freq_sp, "freq_broad": freq_broad, "duration": duration}.items() if v is not None}
    thresh = {k: v for k, v in {"rel_pow": rel_pow, "corr": corr, "rms": rms}.items() if v is not None}
    if thresh:
        kwargs["thresh"] = {**{"rel_pow": 0.2, "corr": 0.65, "rms": 1.5}, **thresh}
    found = yasa.spindles_detect(x, sfreq, min_distance=min_distance_ms, remove_outliers=remove_outliers,
                                 verbose="ERROR", **kwargs)
    return _detections(found, name, refs.signal(source).start_s, "spindles")


def _pair(values: list[float], argument: str) -> list[float]:
    if len(values) != 2 or values[0] > values[1]:
        raise ToolError("bad_argument", f"{argument}: a range is [low, high]", argument=argument)
    return [float(v) for v in values]


@tool("sleep")
def epoch_relative_power(source: str, epochs: dict[str, int], band: list[float], total_band: list[float],
                         epoch_s: float = 30.0, segment_s: float = 4.0, overlap: float = 0.5,
                         max_ptp_uv: float | None = None) -> dict[str, object]:
    """Relative band power of chosen scoring epochs, averaged over channels, skipping a channel's epoch when its peak-to-peak is too large.

    Epoch k (numbered from 1) is samples (k-1)*L .. k*L of the signal, L = round(epoch_s * sfreq).
    Per channel: Welch PSD (Hann, nperseg = round(segment_s * sfreq), noverlap = floor(nperseg *
    overlap)), then the sum of bins in band over the sum in total_band (half-open: low <= f < high).

    Parameters
    ----------
    %(source_uv)s
    epochs : dict of str to int
        Label -> epoch number, e.g. {"A": 12}.
    band : list of float
        [low, high] in Hz of the band of interest.
    total_band : list of float
        [low, high] in Hz of the reference band.
    epoch_s : float, optional
        Epoch length in seconds.
    %(segment_s)s
    %(overlap)s
    max_ptp_uv : float, optional
        Skip a channel's epoch whose peak-to-peak amplitude exceeds this (µV).
    """
    from scipy import signal as sps

    sig = refs.signal(source)
    length, nperseg = int(round(epoch_s * sig.sfreq)), int(round(segment_s * sig.sfreq))
    lo, hi = _pair(band, "band")
    tlo, thi = _pair(total_band, "total_band")
    out: dict[str, Any] = {}
    for label, number in epochs.items():
        if number < 1 or number * length > sig.n_samples:
            raise ToolError("out_of_range", f"epochs: epoch {number} of {label!r} is not inside the signal", argument="epochs")
        block = sig.data[:, (number - 1) * length:number * length]
        ratios = {}
        for name, x in zip(sig.ch_names, block):
            if max_ptp_uv is not None and np.ptp(x) > max_ptp_uv:
                continue
            freqs, psd = sps.welch(x, sig.sfreq, window="hann", nperseg=nperseg, noverlap=int(nperseg * overlap))
            ratios[name] = float(psd[(freqs >= lo) & (freqs < hi)].sum() / psd[(freqs >= tlo) & (freqs < thi)].sum())
        out[label] = {"epoch": number, "score": float(np.mean(list(ratios.values()))) if ratios else None,
                      "n_channels": len(ratios), "channels": ratios}
    return {"power": result("epoch_relative_power", out, band=band, total_band=total_band)}
