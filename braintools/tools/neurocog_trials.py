"""Single-trial neurocognitive analyses: a channel mean per trial, contrasts between trial groups, and sequence effects in reaction times."""
from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from braintools import refs
from braintools.data import Epochs, Table
from braintools.errors import ToolError
from braintools.registry import New, result, tool
from braintools.tools.neurocog import event_values, window_mask


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
    values, rate = event_values(frame, label_column, time_column, time_unit, sfreq)
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
