"""Neurocognitive (ERP) tools: condition averages, difference waves, window peaks and means, GFP,
single-trial window statistics, reaction times from event pairs, ERP images, request checks.

Averages are Epochs objects with one row per condition (its label), so every measure works on
them by `condition`. Latency windows are inclusive at both ends on t_ms = times * 1000, and
peaks take the first sample of a tie. Per-channel results are {channel: {feature: value}}.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from braintools import paths, refs
from braintools.data import Artifact, Epochs, Recording, Signal, Table
from braintools.errors import ToolError
from braintools.registry import New, result, tool
from braintools.state import STATE


@tool("neurocog")
def erp_average(epochs: str, labels: list[str] | None = None, by_label: bool = False,
                name: str = "average") -> dict[str, object]:
    """Average epochs into evoked responses: all selected epochs pooled into one, or one per label.

    Parameters
    ----------
    epochs : str
        Id of epochs (e.g. from epoch_events).
    labels : list of str, optional
        Use only the epochs with these labels (default all).
    by_label : bool, optional
        One average per label (in order of first appearance) instead of one pooled average.
    name : str, optional
        The label of the pooled average.
    """
    ep = refs.epochs(epochs)
    chosen = [i for i, lab in enumerate(ep.labels) if labels is None or lab in labels]
    if not chosen:
        raise ToolError("bad_argument", f"labels: no epochs labelled {labels}", argument="labels")
    groups = {lab: [i for i in chosen if ep.labels[i] == lab] for lab in dict.fromkeys(ep.labels[i] for i in chosen)} \
        if by_label else {name: chosen}
    data = np.stack([ep.data[idx].mean(axis=0) for idx in groups.values()])
    counts = {lab: len(idx) for lab, idx in groups.items()}
    out = Epochs(data, ep.sfreq, list(ep.ch_names), list(ep.ch_types), ep.times.copy(),
                 np.zeros(len(groups)), list(groups), ep.history + [f"averaged {counts}"])
    return {"evoked": New("views", "ep", out), "n_averaged": counts}


@tool("neurocog")
def difference_wave(a: str, b: str, condition_a: str | None = None, condition_b: str | None = None,
                    name: str = "difference") -> dict[str, object]:
    """The difference wave a minus b of two evoked responses (same channels and times).

    Parameters
    ----------
    a : str
        Id of the evoked response (averaged epochs) subtracted from.
    b : str
        Id of the evoked response subtracted.
    condition_a : str, optional
        The condition (label) of `a` to use when it holds several.
    condition_b : str, optional
        The condition (label) of `b` to use when it holds several.
    name : str, optional
        The label of the difference wave.
    """
    ea, eb = refs.epochs(a, "a"), refs.epochs(b, "b")
    if ea.ch_names != eb.ch_names or ea.times.shape != eb.times.shape or not np.allclose(ea.times, eb.times):
        raise ToolError("bad_argument", "b: the two responses differ in channels or times", argument="b")
    diff = _row(ea, condition_a, "condition_a") - _row(eb, condition_b, "condition_b")
    out = Epochs(diff[None], ea.sfreq, list(ea.ch_names), list(ea.ch_types), ea.times.copy(), np.zeros(1), [name],
                 ea.history + [f"minus {b}"])
    return {"evoked": New("views", "ep", out)}


@tool("neurocog")
def erp_peak(evoked: str, window_ms: list[float], polarity: Literal["positive", "negative", "absolute"] = "positive",
             channels: list[str] | None = None, condition: str | None = None) -> dict[str, object]:
    """Peak amplitude (µV) and latency (ms) per channel within an inclusive latency window.

    The peak is the largest (positive), smallest (negative) or largest absolute (absolute) sample
    with window_ms[0] <= t_ms <= window_ms[1]; the first such sample wins a tie.

    Parameters
    ----------
    evoked : str
        Id of an evoked response (averaged epochs, a difference wave, a GFP trace).
    %(window_ms)s
    polarity : str, optional
        Which extreme is the peak.
    %(channels)s
    %(condition)s
    """
    ev = refs.epochs(evoked, "evoked")
    row, mask = _row(ev, condition, "condition"), window_mask(ev.times, window_ms)
    t_ms = ev.times[mask] * 1000.0
    out = {}
    for i in refs.channel_indices(ev.ch_names, channels):
        x = row[i, mask]
        k = int(np.argmax(x) if polarity == "positive" else np.argmin(x) if polarity == "negative" else np.argmax(np.abs(x)))
        out[ev.ch_names[i]] = {"amplitude_uv": float(x[k]), "latency_ms": float(t_ms[k])}
    return {"peaks": result("per_channel", out, window_ms=window_ms, polarity=polarity)}


@tool("neurocog")
def window_mean(evoked: str, window_ms: list[float], channels: list[str] | None = None,
                condition: str | None = None) -> dict[str, object]:
    """Mean amplitude (µV) per channel over the samples with window_ms[0] <= t_ms <= window_ms[1].

    Parameters
    ----------
    evoked : str
        Id of an evoked response (averaged epochs, a difference wave).
    window_ms : list of float
        [start, end] latency in ms, both included; only samples inside the epoch count.
    %(channels)s
    %(condition)s
    """
    ev = refs.epochs(evoked, "evoked")
    row, mask = _row(ev, condition, "condition"), window_mask(ev.times, window_ms)
    out = {ev.ch_names[i]: {"mean_uv": float(row[i, mask].mean())} for i in refs.channel_indices(ev.ch_names, channels)}
    return {"means": result("per_channel", out, window_ms=window_ms, n_samples=int(mask.sum()))}


@tool("neurocog")
def global_field_power(evoked: str, channels: list[str] | None = None, ddof: int = 0,
                       condition: str | None = None) -> dict[str, object]:
    """Global field power: the standard deviation across channels at each time (ddof 0: population SD).

    The result is an evoked response with one channel "GFP" (µV), for erp_peak or window_mean.

    Parameters
    ----------
    evoked : str
        Id of an evoked response.
    channels : list of str, optional
        Channels the SD is taken over (default all).
    ddof : int, optional
        Delta degrees of freedom of the SD (0 divides by N, 1 by N - 1).
    condition : str, optional
        The condition (label) to use when the response holds several.
    """
    ev = refs.epochs(evoked, "evoked")
    idx = refs.channel_indices(ev.ch_names, channels)
    if len(idx) <= ddof:
        raise ToolError("bad_argument", f"channels: {len(idx)} channels are too few for ddof={ddof}", argument="channels")
    gfp = _row(ev, condition, "condition")[idx].std(axis=0, ddof=ddof)
    label = condition or ev.labels[0]
    out = Epochs(gfp[None, None, :], ev.sfreq, ["GFP"], ["misc_uv"], ev.times.copy(), np.zeros(1), [label],
                 ev.history + [f"GFP over {len(idx)} channels (ddof {ddof})"])
    return {"gfp": New("views", "ep", out)}


@tool("neurocog")
def trial_window_stats(epochs: str, window_ms: list[float], channels: list[str] | None = None,
                       below_uv: float = 0.0) -> dict[str, object]:
    """Single-trial window means per channel: their mean, SD, and the share of trials below a level.

    Each trial's mean over window_ms[0] <= t_ms <= window_ms[1]; percent_below counts trials whose
    mean is strictly below below_uv, percent_above those strictly above it.

    Parameters
    ----------
    epochs : str
        Id of (single-trial) epochs.
    %(window_ms)s
    %(channels)s
    below_uv : float, optional
        The level in µV the trial means are compared with.
    """
    ep = refs.epochs(epochs)
    mask = window_mask(ep.times, window_ms)
    out = {}
    for i in refs.channel_indices(ep.ch_names, channels):
        means = ep.data[:, i, mask].mean(axis=1)
        out[ep.ch_names[i]] = {"n_trials": int(len(means)), "mean_uv": float(means.mean()),
                               "sd_uv": float(means.std(ddof=1)) if len(means) > 1 else None,
                               "percent_below": float(100.0 * np.mean(means < below_uv)),
                               "percent_above": float(100.0 * np.mean(means > below_uv))}
    return {"stats": result("per_channel", out, window_ms=window_ms, below_uv=below_uv)}


@tool("neurocog")
def reaction_times(events: str, stimulus_labels: list[str], response_labels: list[str], correct_labels: list[str],
                   label_column: str = "label", time_column: str = "onset_s",
                   time_unit: Literal["seconds", "samples"] = "seconds", sfreq: float | None = None,
                   stimulus_window_s: list[float] | None = None, deadline_ms: float | None = None,
                   same_time_counts: bool = False) -> dict[str, object]:
    """Pair each stimulus with the first response after it; reaction times and correctness.

    A stimulus is kept when its time lies in stimulus_window_s (inclusive). Its response is the first event of
    response_labels strictly after it (or at the same time too, with same_time_counts); a
    stimulus with none is unanswered. A response is correct when its label is in correct_labels
    and its reaction time is at most deadline_ms. mean_rt_ms and median_rt_ms are over correct ones.

    Parameters
    ----------
    %(events)s
    stimulus_labels : list of str
        Labels of the stimulus events.
    response_labels : list of str
        Labels of the response events (any of them ends the search).
    correct_labels : list of str
        Response labels that count as correct.
    %(label_column)s
    %(time_column)s
    %(time_unit)s
    %(sfreq)s
    stimulus_window_s : list of float, optional
        [start, end] in seconds: keep only the stimuli with start <= time <= end (default all).
    deadline_ms : float, optional
        Longest reaction time that counts as correct (default: no deadline).
    same_time_counts : bool, optional
        Whether a response at the stimulus's own time counts.
    """
    frame = refs.table(events, "events").frame
    if stimulus_window_s is not None and len(stimulus_window_s) != 2:
        raise ToolError("bad_argument", "stimulus_window_s: give [start, end]", argument="stimulus_window_s")
    values, rate = event_values(frame, label_column, time_column, time_unit, sfreq)
    times = values / rate
    labels = frame[label_column].astype(str).to_numpy()
    lo, hi = stimulus_window_s if stimulus_window_s is not None else (-np.inf, np.inf)
    stim = np.flatnonzero(np.isin(labels, stimulus_labels) & (times >= lo) & (times <= hi))
    resp = np.flatnonzero(np.isin(labels, response_labels))
    resp = resp[np.argsort(times[resp], kind="stable")]
    side: Literal["left", "right"] = "left" if same_time_counts else "right"
    rows = []
    for i in stim:
        k = int(np.searchsorted(times[resp], times[i], side=side))
        if k < len(resp):
            j = resp[k]
            rt = (values[j] - values[i]) / rate * 1000.0
            ok = labels[j] in correct_labels and (deadline_ms is None or rt <= deadline_ms)
            rows.append({"stimulus_s": times[i], "stimulus": labels[i], "response": labels[j], "rt_ms": rt, "correct": ok})
    trials = pd.DataFrame(rows, columns=["stimulus_s", "stimulus", "response", "rt_ms", "correct"])
    correct = trials.loc[trials["correct"].astype(bool), "rt_ms"].to_numpy(float)
    summary = {"n_stimuli": int(len(stim)), "n_responded": int(len(trials)), "n_correct": int(len(correct)),
               "mean_rt_ms": float(correct.mean()) if len(correct) else None,
               "median_rt_ms": float(np.median(correct)) if len(correct) else None}
    return {"summary": result("reaction_times", summary), "trials": New("events", "evt", Table(trials, "trials"))}


@tool("neurocog")
def erp_image(epochs: str, channel: str, path: str, clip_percentile: float = 98.0,
              title: str | None = None) -> dict[str, object]:
    """Save an ERP image PNG: single trials as rows (in epoch order), time as columns, amplitude as colour.

    Parameters
    ----------
    %(epochs_single_trial)s
    channel : str
        The channel to show.
    path : str
        Output file under /workspace/file_check, e.g. "file_check/erp_image.png".
    clip_percentile : float, optional
        The colour scale spans +/- this percentile of |amplitude|.
    title : str, optional
        Figure title (default: the channel and trial count).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ep = refs.epochs(epochs)
    x = ep.data[:, refs.channel_indices(ep.ch_names, [channel], "channel")[0], :]
    if not 0 < clip_percentile <= 100:
        raise ToolError("bad_argument", "clip_percentile: must lie in (0, 100]", argument="clip_percentile")
    if not path.lower().endswith(".png"):
        raise ToolError("unsupported", "path: the ERP image is written as PNG (name it *.png)", argument="path")
    file = paths.output_path(path)
    limit = float(np.percentile(np.abs(x), clip_percentile)) or 1.0
    fig, ax = plt.subplots(figsize=(7, 4.5))
    image = ax.imshow(x, aspect="auto", origin="upper", cmap="RdBu_r", vmin=-limit, vmax=limit, interpolation="nearest",
                      extent=(ep.times[0] * 1000, ep.times[-1] * 1000, len(x), 0))
    ax.set(xlabel="time (ms)", ylabel="trial", title=title or f"{channel}: {len(x)} trials")
    fig.colorbar(image, ax=ax, label="µV")
    fig.savefig(file, format="png", dpi=100)
    plt.close(fig)
    return {"artifact": New("artifacts", "art", _artifact(file, "png"))}


@tool("neurocog")
def check_erp_request(source: str, channels: list[str], window_ms: list[float], epoch_start_ms: float,
                      epoch_end_ms: float) -> dict[str, object]:
    """Whether a requested ERP measure is possible: the channels exist (exact names), then the window lies in the epoch.

    status is "ok" or "invalid_request"; reason is "none", "unknown_channel" (checked first) or
    "window_out_of_range" (start < epoch_start_ms, end > epoch_end_ms, or start >= end).

    Parameters
    ----------
    source : str
        Id of a recording, signal or epochs whose channel names are checked.
    channels : list of str
        The requested channels.
    window_ms : list of float
        The requested [start, end] latency window in ms.
    epoch_start_ms : float
        The epoch's nominal start in ms (e.g. -200).
    epoch_end_ms : float
        The epoch's nominal end in ms (e.g. 500).
    """
    names = STATE.get(source, "source", (Recording, Signal, Epochs)).value.ch_names
    if len(window_ms) != 2:
        raise ToolError("bad_argument", "window_ms: give [start, end]", argument="window_ms")
    missing = [c for c in channels if c not in names]
    lo, hi = window_ms
    reason = "unknown_channel" if missing else \
        "window_out_of_range" if lo < epoch_start_ms or hi > epoch_end_ms or lo >= hi else "none"
    value = {"valid": reason == "none", "status": "ok" if reason == "none" else "invalid_request", "reason": reason,
             "missing_channels": missing}
    return {"check": result("request_check", value)}


def _row(ev: Epochs, condition: str | None, argument: str) -> np.ndarray:
    """The (channels x times) data of one condition of an evoked response."""
    if condition is None:
        if ev.data.shape[0] != 1:
            raise ToolError("bad_argument", f"{argument}: this holds {ev.data.shape[0]} epochs; average them (erp_average) "
                            f"or name a condition of {sorted(set(ev.labels))[:10]}", argument=argument)
        return ev.data[0]  # type: ignore[no-any-return]
    if condition not in ev.labels:
        raise ToolError("bad_argument", f"{argument}: no condition {condition!r}; conditions: {ev.labels[:10]}", argument=argument)
    return ev.data[ev.labels.index(condition)]  # type: ignore[no-any-return]


def window_mask(times: np.ndarray, window_ms: list[float]) -> np.ndarray:
    """Inclusive mask window_ms[0] <= t_ms <= window_ms[1]; out_of_range when it holds no sample."""
    if len(window_ms) != 2 or window_ms[0] > window_ms[1]:
        raise ToolError("bad_argument", "window_ms: give [start, end] with start <= end", argument="window_ms")
    t_ms = times * 1000.0
    mask = (t_ms >= window_ms[0]) & (t_ms <= window_ms[1])
    if not mask.any():
        raise ToolError("out_of_range", f"window_ms: no sample in {window_ms} ms (epoch {t_ms[0]:.1f}..{t_ms[-1]:.1f} ms)",
                        argument="window_ms")
    return mask


def event_values(frame: pd.DataFrame, label_column: str, time_column: str, time_unit: str,
                  sfreq: float | None) -> tuple[np.ndarray, float]:
    """An events table's time column as numbers, and the units per second (sfreq for samples, else 1)."""
    for name, argument in ((label_column, "label_column"), (time_column, "time_column")):
        if name not in frame.columns:
            raise ToolError("bad_argument", f"{argument}: no column {name!r}; columns: {list(frame.columns)}", argument=argument)
    if time_unit == "samples" and (sfreq is None or sfreq <= 0):
        raise ToolError("bad_argument", "sfreq: give the sampling rate for times in samples", argument="sfreq")
    values = pd.to_numeric(frame[time_column], errors="coerce").to_numpy(float)
    return values, float(sfreq) if time_unit == "samples" and sfreq else 1.0


def _artifact(file: Path, fmt: str) -> Artifact:
    """An Artifact for a written file, its path as the sandbox shows it."""
    written = Path(str(file))
    body = written.read_bytes()
    shown = f"/workspace/file_check/{written.resolve().relative_to(paths.output_root().resolve()).as_posix()}"
    return Artifact(shown, fmt, len(body), hashlib.sha256(body).hexdigest())
