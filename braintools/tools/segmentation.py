"""Segmentation: fixed-length windows (30-s sleep epochs among them) and event-locked epochs."""
from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from braintools import refs
from braintools.data import Epochs
from braintools.errors import ToolError
from braintools.registry import New, check_size, tool


@tool("segmentation")
def fixed_windows(source: str, window_s: float, step_s: float | None = None, drop_partial: bool = True) -> dict[str, object]:
    """Cut a signal into windows of window_s seconds every step_s seconds (30-s sleep epochs: window_s=30).

    Window k covers samples k*step .. k*step + length, with length = round(window_s * sfreq)
    and step = round(step_s * sfreq), counted from the signal's first sample.

    Parameters
    ----------
    %(source)s
    window_s : float
        Window length in seconds.
    step_s : float, optional
        Step between window starts (default window_s: no overlap).
    drop_partial : bool, optional
        Drop a last window that would run past the end (False: an error instead).
    """
    sig = refs.signal(source)
    length = int(round(window_s * sig.sfreq))
    step = int(round((step_s or window_s) * sig.sfreq))
    if length < 1 or step < 1 or length > sig.n_samples:
        raise ToolError("out_of_range", f"window_s: {length} samples for a signal of {sig.n_samples}", argument="window_s")
    starts = np.arange(0, sig.n_samples - length + 1, step)
    if not drop_partial and (sig.n_samples - length) % step:
        raise ToolError("out_of_range", "window_s: the signal does not divide into whole windows", argument="window_s")
    check_size(len(starts) * length * len(sig.ch_names), "the windows")
    data = np.stack([sig.data[:, s:s + length] for s in starts])
    onsets = sig.start_s + starts / sig.sfreq
    epochs = Epochs(data, sig.sfreq, list(sig.ch_names), list(sig.ch_types), np.arange(length) / sig.sfreq, onsets,
                    [str(i) for i in range(len(starts))], sig.history + [f"windows {window_s:g} s every {(step_s or window_s):g} s"])
    return {"epochs": New("views", "ep", epochs)}


@tool("segmentation")
def epoch_events(source: str, events: str, tmin_s: float, tmax_s: float, labels: list[str | int] | None = None,
                 label_column: str = "label", time_column: str = "onset_s",
                 time_unit: Literal["seconds", "samples"] = "seconds", channels: list[str | list[str]] | None = None,
                 baseline_end_s: float | None = None, baseline_start_s: float | None = None,
                 reject_uv: dict[str, float] | None = None, reject_channels: list[str] | None = None,
                 flat_uv: dict[str, float] | None = None) -> dict[str, object]:
    """Cut epochs around events of a table, as mne.Epochs does (sample rounding, baseline, peak-to-peak rejection).

    An event's sample is its time_column value (samples from the recording's first sample, or
    round(seconds * sfreq)). Epochs span samples round(tmin_s * sfreq) .. round(tmax_s * sfreq),
    both included; an epoch that would run past either end of the signal is dropped. Baseline:
    the mean over the samples with baseline_start_s <= t <= baseline_end_s is subtracted per epoch
    and channel. Rejection drops an epoch whose peak-to-peak (max - min over the whole epoch) on
    any counted channel exceeds its type's threshold (reject_uv), or is below it (flat_uv).

    Parameters
    ----------
    source : str
        Id of a signal (re-reference it first if needed: the epochs keep its values).
    %(events)s
    tmin_s : float
        Epoch start relative to the event, in seconds (e.g. -0.2).
    tmax_s : float
        Epoch end relative to the event, in seconds (included).
    labels : list of str or int, optional
        Keep only the events whose label_column equals one of these (compared as text); default all.
    label_column : str, optional
        The column holding the event labels (e.g. "trial_type", "label", "value").
    time_column : str, optional
        The column holding the event onsets (e.g. "onset_s", "onset", "sample").
    %(time_unit)s
    channels : list of str or lists of str, optional
        Channels to keep in the epochs, in order (default all); nested lists (channel groups) are joined.
    baseline_end_s : float, optional
        End of the baseline in seconds, included (e.g. 0); default: no baseline correction.
    baseline_start_s : float, optional
        Start of the baseline in seconds (default: the epoch start).
    reject_uv : dict of str to float, optional
        Peak-to-peak rejection thresholds in µV per channel type, e.g. {"eeg": 100}.
    reject_channels : list of str, optional
        The channels whose peak-to-peak counts for rejection (default every kept channel).
    flat_uv : dict of str to float, optional
        Minimum peak-to-peak in µV per channel type; flatter epochs are dropped.
    """
    sig = refs.signal(source)
    frame = refs.table(events, "events").frame
    onsets, names = _event_samples(frame, labels, label_column, time_column, time_unit, sig.sfreq)
    picks = refs.channel_indices(sig.ch_names, _flat(channels))
    start, stop = int(round(tmin_s * sig.sfreq)), int(round(tmax_s * sig.sfreq))
    if stop < start:
        raise ToolError("bad_argument", "tmax_s: must not be before tmin_s", argument="tmax_s")
    first = int(round(sig.start_s * sig.sfreq))
    local = onsets - first
    inside = (local + start >= 0) & (local + stop < sig.n_samples)
    local, names = local[inside], [n for n, k in zip(names, inside) if k]
    check_size(len(local) * len(picks) * (stop - start + 1), "the epochs")
    offsets = np.arange(start, stop + 1)
    data = sig.data[np.asarray(picks)[:, None, None], (local[:, None] + offsets)[None]].transpose(1, 0, 2).copy()
    times = offsets / sig.sfreq
    if baseline_end_s is not None:
        data -= _baseline(data, times, baseline_start_s, baseline_end_s)
    ch_names, ch_types = [sig.ch_names[i] for i in picks], [sig.ch_types[i] for i in picks]
    keep = _ptp_keep(data, ch_names, ch_types, reject_uv, flat_uv, reject_channels)
    epochs = Epochs(data[keep], sig.sfreq, ch_names, ch_types, times, (local[keep] + first) / sig.sfreq,
                    [n for n, k in zip(names, keep) if k],
                    sig.history + [f"epochs {tmin_s:g}..{tmax_s:g} s around {len(names)} events"])
    dropped = {"outside_signal": int((~inside).sum()), "rejected": int((~keep).sum())}
    return {"epochs": New("views", "ep", epochs), "dropped": dropped}


def _event_samples(frame: pd.DataFrame, labels: list[str | int] | None, label_column: str, time_column: str,
                   time_unit: str, sfreq: float) -> tuple[np.ndarray, list[str]]:
    """The selected events' samples (from the recording's start) and labels, in table order."""
    for name, argument in ((label_column, "label_column"), (time_column, "time_column")):
        if name not in frame.columns:
            raise ToolError("bad_argument", f"{argument}: no column {name!r}; columns: {list(frame.columns)}", argument=argument)
    text = frame[label_column].astype(str)
    chosen = frame[text.isin([str(v) for v in labels])] if labels is not None else frame
    if chosen.empty:
        raise ToolError("bad_argument", f"labels: no events labelled {labels} in {label_column!r}", argument="labels")
    values = pd.to_numeric(chosen[time_column], errors="coerce").to_numpy(float)
    if not np.isfinite(values).all():
        raise ToolError("bad_argument", f"time_column: {time_column!r} holds non-numeric onsets", argument="time_column")
    samples = np.round(values if time_unit == "samples" else values * sfreq).astype(int)
    return samples, chosen[label_column].astype(str).tolist()


def _baseline(data: np.ndarray, times: np.ndarray, start_s: float | None, end_s: float) -> np.ndarray:
    """Per epoch and channel, the mean over start_s <= t <= end_s (mne.baseline.rescale's indices)."""
    mask = (times >= (times[0] if start_s is None else start_s)) & (times <= end_s)
    if not mask.any():
        raise ToolError("out_of_range", f"baseline: no samples between {start_s} and {end_s} s", argument="baseline_end_s")
    return data[:, :, mask].mean(axis=2, keepdims=True)  # type: ignore[no-any-return]


def _ptp_keep(data: np.ndarray, ch_names: list[str], ch_types: list[str], reject_uv: dict[str, float] | None,
              flat_uv: dict[str, float] | None, counted: list[str] | None) -> np.ndarray:
    """Which epochs pass the peak-to-peak limits on the counted channels (mne: reject if ptp > limit)."""
    keep = np.ones(data.shape[0], bool)
    if not reject_uv and not flat_uv:
        return keep
    idx = refs.channel_indices(ch_names, counted, "reject_channels")
    ptp = np.ptp(data[:, idx, :], axis=2)
    types = [ch_types[i] for i in idx]
    for limits, too_big in ((reject_uv or {}, True), (flat_uv or {}, False)):
        for kind, limit in limits.items():
            cols = [j for j, t in enumerate(types) if t == kind]
            if not cols:
                raise ToolError("bad_argument", f"reject_uv/flat_uv: no counted channel of type {kind!r}", argument="reject_uv")
            bad = (ptp[:, cols] > limit) if too_big else (ptp[:, cols] < limit)
            keep &= ~bad.any(axis=1)
    return keep


def _flat(names: list[str | list[str]] | None) -> list[str] | None:
    """Channel names with groups (nested lists) joined in order."""
    if names is None:
        return None
    return [n for item in names for n in ([item] if isinstance(item, str) else item)]
