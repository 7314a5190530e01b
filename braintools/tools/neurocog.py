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
    values, rate = _event_values(frame, label_column, time_column, time_unit, sfreq)
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


def _event_values(frame: pd.DataFrame, label_column: str, time_column: str, time_unit: str,
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


@tool("neurocog")
def channel_mean(epochs: str, channels: list[str], name: str = "mean") -> dict[str, object]:
    """Average channels into one (a region-of-interest waveform), per epoch or per condition of an evoked response.

    The new channel at each time is the plain mean of the listed channels; every epoch (or condition) keeps its
    label, so erp_peak and window_mean work on it as on any evoked response.

    Parameters
    ----------
    epochs : str
        Id of epochs or of an evoked response (averaged epochs, a difference wave).
    channels : list of str
        The channels to average (at least one).
    name : str, optional
        The name of the new channel.
    """
    ep = refs.epochs(epochs)
    if not channels:
        raise ToolError("bad_argument", "channels: give at least one channel", argument="channels")
    idx = refs.channel_indices(ep.ch_names, channels)
    if len(set(idx)) != len(idx):
        raise ToolError("bad_argument", "channels: a channel is listed twice", argument="channels")
    kinds = {ep.ch_types[i] for i in idx}
    data = ep.data[:, idx, :].mean(axis=1, keepdims=True)
    out = Epochs(data, ep.sfreq, [name], [kinds.pop() if len(kinds) == 1 else "misc_uv"], ep.times.copy(),
                 ep.onsets_s.copy(), list(ep.labels), ep.history + [f"mean of {len(idx)} channels as {name!r}"])
    return {"epochs": New("views", "ep", out)}


@tool("neurocog")
def trial_contrast(a: str, b: str, window_ms: list[float],
                   test: Literal["welch", "student", "mannwhitney", "permutation"] = "welch",
                   channels: list[str] | None = None, alpha: float = 0.05, n_permutations: int = 5000,
                   seed: int = 0) -> dict[str, object]:
    """Compare two sets of single trials: each trial's mean over a latency window, tested two-sided between the sets.

    A trial's value is its mean over the samples with window_ms[0] <= t_ms <= window_ms[1] (averaged over
    `channels` when several are given). "welch" and "student" are scipy.stats.ttest_ind with unequal or pooled
    variances, "mannwhitney" is scipy.stats.mannwhitneyu, "permutation" shuffles the set labels n_permutations
    times (numpy default_rng(seed)) and gives p = (1 + count of |mean difference| >= observed) / (1 + n_permutations).
    significant is p < alpha.

    Parameters
    ----------
    a : str
        Id of the first set of epochs (single trials).
    b : str
        Id of the second set of epochs, with the same channels and times.
    %(window_ms)s
    test : str, optional
        The two-sample test.
    channels : list of str, optional
        The channel, or channels averaged into one value per trial (default: the epochs must hold one channel).
    %(alpha)s
    n_permutations : int, optional
        Label shuffles for the permutation test (100 to 100000).
    seed : int, optional
        Seed of the permutation test's random generator.
    """
    from scipy import stats as sst

    ea, eb = refs.epochs(a, "a"), refs.epochs(b, "b")
    if ea.ch_names != eb.ch_names or ea.times.shape != eb.times.shape or not np.allclose(ea.times, eb.times):
        raise ToolError("bad_argument", "b: the two sets differ in channels or times", argument="b")
    if channels is None and len(ea.ch_names) != 1:
        raise ToolError("bad_argument", f"channels: these epochs hold {len(ea.ch_names)} channels; name the ones to use",
                        argument="channels")
    if not 0 < alpha < 1:
        raise ToolError("bad_argument", "alpha: must lie between 0 and 1", argument="alpha")
    if not 100 <= n_permutations <= 100_000:
        raise ToolError("out_of_range", "n_permutations: must lie between 100 and 100000", argument="n_permutations")
    idx = refs.channel_indices(ea.ch_names, channels)
    mask = window_mask(ea.times, window_ms)
    xa = ea.data[:, idx][:, :, mask].mean(axis=(1, 2))
    xb = eb.data[:, idx][:, :, mask].mean(axis=(1, 2))
    if len(xa) < 2 or len(xb) < 2:
        raise ToolError("bad_argument", f"a, b: need at least 2 trials in each set (got {len(xa)} and {len(xb)})",
                        argument="a")
    if test in ("welch", "student"):
        res = sst.ttest_ind(xa, xb, equal_var=test == "student")
        statistic, p = float(res.statistic), float(res.pvalue)
    elif test == "mannwhitney":
        res = sst.mannwhitneyu(xa, xb, alternative="two-sided")
        statistic, p = float(res.statistic), float(res.pvalue)
    else:
        pooled, observed = np.concatenate([xa, xb]), abs(xa.mean() - xb.mean())
        rng, hits = np.random.default_rng(seed), 0
        for _ in range(n_permutations):
            shuffled = rng.permutation(pooled)
            hits += abs(shuffled[:len(xa)].mean() - shuffled[len(xa):].mean()) >= observed
        statistic, p = float(xa.mean() - xb.mean()), (hits + 1) / (n_permutations + 1)
    value = {"test": test, "n_a": int(len(xa)), "n_b": int(len(xb)), "mean_a_uv": float(xa.mean()),
             "mean_b_uv": float(xb.mean()), "difference_uv": float(xa.mean() - xb.mean()), "statistic": statistic,
             "p_value": p, "alpha": alpha, "significant": bool(p < alpha)}
    return {"contrast": result("trial_contrast", value, window_ms=window_ms, channels=[ea.ch_names[i] for i in idx])}


@tool("neurocog")
def sequence_effects(events: str, stimulus_labels: list[str], response_labels: list[str],
                     correct_for: dict[str, list[str]], label_column: str = "label", time_column: str = "onset_s",
                     time_unit: Literal["seconds", "samples"] = "seconds", sfreq: float | None = None,
                     summary_labels: list[str] | None = None, stimulus_window_s: list[float] | None = None,
                     min_rt_ms: float | None = None, deadline_ms: float | None = None,
                     before_next_labels: list[str] | None = None, drop_after_error: bool = False,
                     break_labels: list[str] | None = None) -> dict[str, object]:
    """Reaction times split by trial history: "repeat" trials (same label as the previous stimulus) vs "switch" trials.

    The trial sequence is every event of stimulus_labels in time order. Each stimulus's response is the first event of
    response_labels strictly after it; it is valid when its reaction time is at least min_rt_ms and at most
    deadline_ms and, with before_next_labels, comes before the next event of those labels; it is correct when valid and
    its label is in correct_for[stimulus label]. A trial is a repeat when the previous stimulus of the sequence has its
    label, a switch otherwise; the first stimulus has no previous one, nor has the first after an event of
    break_labels. drop_after_error leaves out trials whose previous stimulus was not answered correctly. The summary
    covers the correct trials whose stimulus is in summary_labels (default all) and lies in stimulus_window_s
    (inclusive): count, median and mean reaction time of repeats and switches, and switch minus repeat.

    Parameters
    ----------
    %(events)s
    stimulus_labels : list of str
        Labels of the stimuli that make the trial sequence.
    response_labels : list of str
        Labels of the responses.
    correct_for : dict of str to list of str
        Per stimulus label, the response labels that are correct for it.
    %(label_column)s
    %(time_column)s
    %(time_unit)s
    %(sfreq)s
    summary_labels : list of str, optional
        The stimulus labels whose trials are summarised (default all of stimulus_labels).
    stimulus_window_s : list of float, optional
        [start, end] in seconds: summarise only stimuli with start <= time <= end (the sequence still uses all).
    min_rt_ms : float, optional
        Shortest valid reaction time (earlier first responses make the trial an error).
    deadline_ms : float, optional
        Longest valid reaction time.
    before_next_labels : list of str, optional
        A response at or after the next event of these labels is not valid for this stimulus.
    drop_after_error : bool, optional
        Leave out trials that follow a stimulus without a correct response.
    break_labels : list of str, optional
        Events (e.g. block boundaries) after which the next stimulus has no previous one.
    """
    frame = refs.table(events, "events").frame
    values, rate = _event_values(frame, label_column, time_column, time_unit, sfreq)
    labels = frame[label_column].astype(str).to_numpy()
    times = values / rate
    unknown = sorted(set(stimulus_labels) - set(correct_for))
    if unknown:
        raise ToolError("bad_argument", f"correct_for: no entry for stimulus labels {unknown}", argument="correct_for")
    if stimulus_window_s is not None and len(stimulus_window_s) != 2:
        raise ToolError("bad_argument", "stimulus_window_s: give [start, end]", argument="stimulus_window_s")
    order = np.argsort(times, kind="stable")
    stim = [i for i in order if labels[i] in stimulus_labels]
    if not stim:
        raise ToolError("bad_argument", f"stimulus_labels: no events labelled {stimulus_labels}", argument="stimulus_labels")
    resp = [i for i in order if labels[i] in response_labels]
    resp_times = times[resp]
    nexts = np.sort(times[np.isin(labels, before_next_labels)]) if before_next_labels else None
    breaks = np.sort(times[np.isin(labels, break_labels)]) if break_labels else np.array([])
    rows, previous = [], None
    for i in stim:
        k = int(np.searchsorted(resp_times, times[i], side="right"))
        rt, correct = None, False
        if k < len(resp):
            j = resp[k]
            rt = float((values[j] - values[i]) / rate * 1000.0)
            valid = (min_rt_ms is None or rt >= min_rt_ms) and (deadline_ms is None or rt <= deadline_ms)
            if nexts is not None:
                later = nexts[nexts > times[i]]
                valid = valid and not (later.size and times[j] >= later[0])
            correct = bool(valid and labels[j] in correct_for[labels[i]])
        if previous is not None and np.any((breaks > times[previous[0]]) & (breaks <= times[i])):
            previous = None
        kind: str | None = None if previous is None else ("repeat" if labels[previous[0]] == labels[i] else "switch")
        after_error = previous is not None and not previous[1]
        rows.append({"stimulus_s": float(times[i]), "stimulus": labels[i], "rt_ms": rt, "correct": correct,
                     "sequence": kind, "after_error": bool(after_error)})
        previous = (i, correct)
    trials = pd.DataFrame(rows, columns=["stimulus_s", "stimulus", "rt_ms", "correct", "sequence", "after_error"])
    lo, hi = stimulus_window_s if stimulus_window_s is not None else (-np.inf, np.inf)
    chosen = trials[trials["stimulus"].isin(summary_labels or stimulus_labels) & (trials["stimulus_s"] >= lo)
                    & (trials["stimulus_s"] <= hi) & trials["correct"] & trials["sequence"].notna()]
    if drop_after_error:
        chosen = chosen[~chosen["after_error"]]
    summary: dict[str, object] = {}
    medians: dict[str, float] = {}
    means: dict[str, float] = {}
    for group in ("repeat", "switch"):
        rts = chosen.loc[chosen["sequence"] == group, "rt_ms"].to_numpy(float)
        if rts.size:
            medians[group], means[group] = float(np.median(rts)), float(rts.mean())
        summary[group] = {"n": int(rts.size), "median_rt_ms": medians.get(group), "mean_rt_ms": means.get(group)}
    both = len(medians) == 2
    summary["switch_minus_repeat_median_ms"] = medians["switch"] - medians["repeat"] if both else None
    summary["switch_minus_repeat_mean_ms"] = means["switch"] - means["repeat"] if both else None
    return {"summary": result("sequence_effects", summary), "trials": New("events", "evt", Table(trials, "trials"))}
