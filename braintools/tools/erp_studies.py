"""ERP study tools: the stages of a multi-step ERP analysis that the per-measure neurocog tools leave out.

Bad-channel screening by a standard-deviation ratio, epoch counts over several sets, single-trial
values as a table, median splits of a table, a 2 x 2 factorial analysis of single trials, grand
averages, the correlation of two waves, an ERP line figure and epochs written as a NumPy array.
(Channel clusters and two-sample tests of single trials are neurocog's channel_mean and
trial_contrast.) Amplitudes are in µV, latency windows are inclusive at both ends on
t_ms = times * 1000 (as in the neurocog tools), and every random draw is seeded.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from braintools import paths, refs
from braintools.data import VOLTAGE_TYPES, Artifact, Epochs, Table
from braintools.errors import ToolError
from braintools.registry import New, check_size, result, tool
from braintools.tools.neurocog import window_mask


@tool("neurocog")
def flag_bad_channels(source: str, factor: float, channels: list[str] | None = None) -> dict[str, object]:
    """Bad channels by spread: a channel is bad when its standard deviation exceeds `factor` times the median one.

    Each channel's population standard deviation (ddof 0) over every sample of the signal is
    compared with the median of these standard deviations over the channels considered; a
    channel is bad when sd > factor * median (strictly). "good" lists the others, in signal order.

    Parameters
    ----------
    source : str
        Id of a signal (e.g. every channel of a recording, before re-referencing).
    factor : float
        How many times the median standard deviation a channel may reach (e.g. 8).
    channels : list of str, optional
        The channels considered (default all); the median is taken over these.
    """
    sig = refs.signal(source)
    if not factor > 0:
        raise ToolError("bad_argument", "factor: must be positive", argument="factor")
    idx = refs.channel_indices(sig.ch_names, channels)
    sd = np.array([float(np.std(sig.data[i])) for i in idx])
    median = float(np.median(sd))
    names = [sig.ch_names[i] for i in idx]
    bad = [n for n, s in zip(names, sd) if s > factor * median]
    value = {"bad": bad, "good": [n for n in names if n not in bad], "n_bad": len(bad),
             "median_sd_uv": median, "threshold_uv": factor * median,
             "sd_ratio": {n: round(float(s / median), 4) if median > 0 else None for n, s in zip(names, sd)}}
    return {"channels": result("bad_channels", value, factor=factor)}


@tool("neurocog")
def count_epochs(epochs: list[str], labels: list[str] | None = None) -> dict[str, object]:
    """How many epochs several sets hold together (e.g. the trials kept in two conditions), in all and per label.

    Parameters
    ----------
    %(epochs_list)s
    labels : list of str, optional
        Count only the epochs with these labels (default all).
    """
    if not epochs:
        raise ToolError("bad_argument", "epochs: give at least one id", argument="epochs")
    wanted = None if labels is None else [str(x) for x in labels]
    per_label: dict[str, int] = {}
    for entry in epochs:
        for lab in refs.epochs(entry).labels:
            if wanted is None or lab in wanted:
                per_label[lab] = per_label.get(lab, 0) + 1
    return {"count": result("epoch_count", {"n_epochs": int(sum(per_label.values())), "per_label": per_label})}


@tool("neurocog")
def trial_values(epochs: str, window_ms: list[float], channels: list[str] | None = None, value_column: str = "value",
                 label_column: str = "label") -> dict[str, object]:
    """Single-trial values as a table: each epoch's mean over the channels and the latency window, one row per epoch.

    Columns: "sample" (the epoch's event, in samples from the recording's first sample),
    "onset_s", the label column and the value column, in epoch order.

    Parameters
    ----------
    %(epochs_single_trial)s
    %(window_ms)s
    %(channels_averaged)s
    value_column : str, optional
        Name of the value column (e.g. "amplitude_uv").
    label_column : str, optional
        Name of the label column (e.g. "trial_type").
    """
    ep = refs.epochs(epochs)
    if value_column == label_column or {value_column, label_column} & {"sample", "onset_s"}:
        raise ToolError("bad_argument", "value_column/label_column: must differ from each other and from sample, onset_s",
                        argument="value_column")
    values = _trial_means(ep, window_ms, channels)
    frame = pd.DataFrame({"sample": np.round(ep.onsets_s * ep.sfreq).astype(int), "onset_s": ep.onsets_s,
                          label_column: list(ep.labels), value_column: values})
    return {"table": New("events", "evt", Table(frame, "trials"))}


@tool("neurocog")
def split_halves(table: str, value_column: str, labels: list[str] | None = None, where_column: str | None = None,
                 equals: str | None = None, tie_column: str | None = None, label_column: str = "half") -> dict[str, object]:
    """Split the rows of a table into a low and a high half by a value (a median split, e.g. fast and slow trials).

    The rows (optionally only those where where_column equals `equals`, compared as text) are
    ordered by value_column, ties by tie_column (then by table order); with n rows the first
    floor(n/2) form the low half and the last floor(n/2) the high half, so with an odd n the
    middle row belongs to neither. The result keeps the rows of both halves, in table order, with
    their half in label_column.

    Parameters
    ----------
    table : str
        Id of a table (e.g. the trials of reaction_times).
    value_column : str
        The column ordered on (e.g. "rt_ms").
    labels : list of str, optional
        Names of the low and the high half (default ["low", "high"]).
    %(where_column)s
    equals : str, optional
        ... equals this value (compared as text, e.g. "True").
    tie_column : str, optional
        Orders rows with equal values (e.g. the stimulus time: earlier first).
    label_column : str, optional
        Name of the new column holding each row's half.
    """
    frame = refs.table(table).frame
    names = labels or ["low", "high"]
    if len(names) != 2 or names[0] == names[1]:
        raise ToolError("bad_argument", "labels: give two different names", argument="labels")
    for column, argument in ((value_column, "value_column"), (where_column, "where_column"), (tie_column, "tie_column")):
        if column is not None and column not in frame.columns:
            raise ToolError("bad_argument", f"{argument}: no column {column!r}; columns: {list(frame.columns)}",
                            argument=argument)
    if where_column is not None:
        frame = frame[frame[where_column].astype(str) == str(equals)]
    values = pd.to_numeric(frame[value_column], errors="coerce")
    if values.isna().any():
        raise ToolError("bad_argument", f"value_column: {value_column!r} holds non-numeric values", argument="value_column")
    ties = np.zeros(len(frame)) if tie_column is None else pd.to_numeric(frame[tie_column], errors="coerce").to_numpy(float)
    order = np.lexsort((np.arange(len(frame)), ties, values.to_numpy(float)))  # value, then tie, then table order
    half = len(frame) // 2
    if half == 0:
        raise ToolError("bad_argument", "table: fewer than two rows to split", argument="table")
    side = np.full(len(frame), "", dtype=object)
    side[order[:half]] = names[0]
    side[order[len(frame) - half:]] = names[1]
    out = frame.assign(**{label_column: side})
    out = out[out[label_column] != ""].reset_index(drop=True)
    low, high = values.to_numpy(float)[order[:half]], values.to_numpy(float)[order[len(frame) - half:]]
    summary = {"n_rows": int(len(frame)), "n_per_half": int(half), f"mean_{names[0]}": float(low.mean()),
               f"mean_{names[1]}": float(high.mean()), "low_max": float(low.max()), "high_min": float(high.min())}
    return {"table": New("events", "evt", Table(out, "trials")), "summary": result("split", summary)}


@tool("neurocog")
def factorial_2x2(epochs: str, cells: list[str], window_ms: list[float], channels: list[str] | None = None,
                  test: Literal["anova", "welch_contrast", "aligned_rank", "bootstrap"] = "anova", alpha: float = 0.05,
                  n_bootstrap: int = 2000, seed: int = 0) -> dict[str, object]:
    """A between-trials 2 x 2 design on single-trial values: cell means, main effects, interaction and its test.

    cells names the labels of the cells a1b1, a1b2, a2b1, a2b2 (factor A: first index, factor
    B: second). Each epoch's value is its mean over the channels and latency window; cell means
    are the means of these. main_effect_a = (a1b1 + a1b2)/2 - (a2b1 + a2b2)/2, main_effect_b =
    (a1b2 + a2b2)/2 - (a1b1 + a2b1)/2, interaction = (a1b2 - a1b1) - (a2b2 - a2b1). Tests of the
    interaction (two-sided): anova, the two-way ANOVA F-test (OLS; in a 2 x 2 design type II and
    III agree for the interaction); welch_contrast, a t-test of the interaction contrast with
    per-cell variances and Satterthwaite degrees of freedom; aligned_rank, the aligned rank
    transform (residual plus estimated interaction, ranked with ties averaged) then the ANOVA
    test on the ranks; bootstrap, a percentile interval of the contrast from n_bootstrap
    resamples within each cell (numpy default_rng(seed)). "significant" is "yes" when p < alpha,
    or for bootstrap when the 1 - alpha interval excludes 0.

    Parameters
    ----------
    epochs : str
        Id of single-trial epochs labelled by cell.
    cells : list of str
        The four cell labels, in the order a1b1, a1b2, a2b1, a2b2.
    %(window_ms)s
    %(channels_averaged)s
    test : str, optional
        The interaction test.
    %(alpha)s
    n_bootstrap : int, optional
        Resamples of the bootstrap.
    seed : int, optional
        Seed of the bootstrap.
    """
    ep = refs.epochs(epochs)
    if len(cells) != 4 or len(set(cells)) != 4:
        raise ToolError("bad_argument", "cells: give four different labels (a1b1, a1b2, a2b1, a2b2)", argument="cells")
    if not 0 < alpha < 1:
        raise ToolError("bad_argument", "alpha: must lie between 0 and 1", argument="alpha")
    values = _trial_means(ep, window_ms, channels)
    labels = np.array(ep.labels, dtype=object)
    groups = [values[labels == str(c)] for c in cells]
    for cell, group in zip(cells, groups):
        if len(group) < 2:
            raise ToolError("bad_argument", f"cells: fewer than two epochs labelled {cell!r} "
                            f"(labels: {sorted(set(ep.labels))[:10]})", argument="cells")
    means = [float(g.mean()) for g in groups]
    value: dict[str, object] = {
        "cells": {str(c): {"n": int(len(g)), "mean_uv": m} for c, g, m in zip(cells, groups, means)},
        "main_effect_a_uv": (means[0] + means[1]) / 2 - (means[2] + means[3]) / 2,
        "main_effect_b_uv": (means[1] + means[3]) / 2 - (means[0] + means[2]) / 2,
        "interaction_uv": (means[1] - means[0]) - (means[3] - means[2]),
        "n_total": int(sum(len(g) for g in groups)),
    }
    if test == "bootstrap":
        if not 100 <= n_bootstrap <= 100_000:
            raise ToolError("out_of_range", "n_bootstrap: between 100 and 100000", argument="n_bootstrap")
        low, high = _bootstrap_interval(groups, n_bootstrap, seed, alpha)
        value.update({"ci_low": low, "ci_high": high, "p_value": None,
                      "significant": "yes" if low > 0 or high < 0 else "no"})
    else:
        p = {"anova": _anova_interaction_p, "welch_contrast": _welch_contrast_p, "aligned_rank": _art_interaction_p}[test](groups)
        value.update({"p_value": p, "significant": "yes" if p < alpha else "no"})
    return {"design": result("factorial_2x2", value, test=test, alpha=alpha, window_ms=window_ms)}


@tool("neurocog")
def grand_average(evokeds: list[str], name: str = "grand average") -> dict[str, object]:
    """The grand average: the sample-by-sample mean of several evoked responses, each weighing the same.

    Parameters
    ----------
    evokeds : list of str
        Ids of evoked responses (one condition each) with the same channels and times.
    name : str, optional
        The label of the grand average.
    """
    if len(evokeds) < 2:
        raise ToolError("bad_argument", "evokeds: give at least two evoked responses", argument="evokeds")
    items = [refs.epochs(e, "evokeds") for e in evokeds]
    first = items[0]
    for item in items:
        if item.data.shape[0] != 1:
            raise ToolError("bad_argument", "evokeds: each must hold one condition (average epochs first)", argument="evokeds")
        if item.ch_names != first.ch_names or item.times.shape != first.times.shape or not np.allclose(item.times, first.times):
            raise ToolError("bad_argument", "evokeds: the responses differ in channels or times", argument="evokeds")
    data = np.mean([item.data[0] for item in items], axis=0)[None]
    out = Epochs(data, first.sfreq, list(first.ch_names), list(first.ch_types), first.times.copy(), np.zeros(1), [name],
                 first.history + [f"grand average of {len(items)}"])
    return {"evoked": New("views", "ep", out)}


@tool("neurocog")
def correlate_waves(a: str, b: str, window_ms: list[float] | None = None, channel: str | None = None,
                    condition_a: str | None = None, condition_b: str | None = None) -> dict[str, object]:
    """Pearson correlation of two evoked waves over the samples of a latency window (their agreement in shape).

    Parameters
    ----------
    a : str
        Id of the first evoked response.
    b : str
        Id of the second evoked response (same times).
    window_ms : list of float, optional
        [start, end] latency in ms, both included (default the whole epoch).
    channel : str, optional
        The channel compared (default: the only channel).
    condition_a : str, optional
        The condition (label) of `a` when it holds several.
    condition_b : str, optional
        The condition (label) of `b` when it holds several.
    """
    ea, eb = refs.epochs(a, "a"), refs.epochs(b, "b")
    if ea.times.shape != eb.times.shape or not np.allclose(ea.times, eb.times):
        raise ToolError("bad_argument", "b: the two responses differ in times", argument="b")
    x, y = _trace(ea, channel, condition_a, "condition_a"), _trace(eb, channel, condition_b, "condition_b")
    mask = window_mask(ea.times, window_ms or [ea.times[0] * 1000.0, ea.times[-1] * 1000.0])
    if mask.sum() < 3:
        raise ToolError("out_of_range", "window_ms: fewer than three samples", argument="window_ms")
    r = float(np.corrcoef(x[mask], y[mask])[0, 1])
    return {"correlation": result("correlation", {"r": r, "n_samples": int(mask.sum())}, window_ms=window_ms)}


@tool("neurocog")
def plot_erp(evokeds: list[str], path: str, channel: str | None = None, labels: list[str] | None = None,
             title: str | None = None) -> dict[str, object]:
    """Save a line figure (PNG) of one channel of one or more evoked responses over latency.

    Parameters
    ----------
    evokeds : list of str
        Ids of evoked responses (one condition each), drawn in order.
    path : str
        Output file under /workspace/file_check, e.g. "file_check/erp.png".
    channel : str, optional
        The channel drawn (default: the only channel of each response).
    labels : list of str, optional
        Legend entries, one per response (default their condition labels).
    %(title)s
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not evokeds:
        raise ToolError("bad_argument", "evokeds: give at least one evoked response", argument="evokeds")
    if labels is not None and len(labels) != len(evokeds):
        raise ToolError("bad_argument", "labels: one per evoked response", argument="labels")
    if not path.lower().endswith(".png"):
        raise ToolError("unsupported", "path: the figure is written as PNG (name it *.png)", argument="path")
    items = [refs.epochs(e, "evokeds") for e in evokeds]
    traces = [_trace(item, channel, None, "evokeds") for item in items]
    file = paths.output_path(path)
    fig, ax = plt.subplots(figsize=(7, 4))
    for item, trace, label in zip(items, traces, labels or [item.labels[0] for item in items]):
        ax.plot(item.times * 1000.0, trace, label=label)
    ax.axhline(0, color="grey", lw=0.6)
    ax.axvline(0, color="grey", lw=0.6)
    ax.set(xlabel="latency (ms)", ylabel="µV", title=title or "")
    ax.legend(loc="best", fontsize=8)
    fig.savefig(file, format="png", dpi=100)
    plt.close(fig)
    return {"artifact": New("artifacts", "art", _artifact(file, "png"))}


@tool("neurocog")
def write_epochs_npy(epochs: list[str], path: str, channels: list[str] | None = None, types: list[str] | None = None,
                     labels: list[str] | None = None) -> dict[str, object]:
    """Save epochs as a NumPy .npy array of shape (epochs, channels, samples) in µV, in event order.

    Several sets of epochs (e.g. one per condition, with the same channels and times) are
    written together, ordered by their events' times (ties keep the order given).

    Parameters
    ----------
    %(epochs_list)s
    path : str
        Output file under /workspace/file_check, e.g. "file_check/epochs.npy".
    channels : list of str, optional
        Channels written, in this order (default all, in stored order).
    types : list of str, optional
        Only channels of these types (e.g. ["eeg"]).
    labels : list of str, optional
        Only epochs with these labels (default all).
    """
    if not epochs:
        raise ToolError("bad_argument", "epochs: give at least one id", argument="epochs")
    sets = [refs.epochs(e) for e in epochs]
    first = sets[0]
    for item in sets[1:]:
        if item.ch_names != first.ch_names or item.times.shape != first.times.shape or not np.allclose(item.times, first.times):
            raise ToolError("bad_argument", "epochs: the sets differ in channels or times", argument="epochs")
    if not path.lower().endswith(".npy"):
        raise ToolError("unsupported", "path: the array is written as .npy", argument="path")
    idx = refs.channel_indices(first.ch_names, channels)
    if types is not None:
        idx = [i for i in idx if first.ch_types[i] in types]
    wanted = None if labels is None else [str(x) for x in labels]
    rows = [(float(item.onsets_s[k]), n, k) for n, item in enumerate(sets) for k, lab in enumerate(item.labels)
            if wanted is None or lab in wanted]
    if not idx or not rows:
        raise ToolError("bad_argument", "channels/types/labels: the selection is empty", argument="channels")
    if any(first.ch_types[i] not in VOLTAGE_TYPES for i in idx):
        raise ToolError("bad_argument", "channels: only voltage channels are written in µV", argument="channels")
    check_size(len(rows) * len(idx) * len(first.times), "the array")
    rows.sort(key=lambda row: row[0])
    file = paths.output_path(path)
    np.save(file, np.stack([sets[n].data[k][idx] for _, n, k in rows]))
    return {"artifact": New("artifacts", "art", _artifact(file, "npy")), "shape": [len(rows), len(idx), len(first.times)]}


def _trial_means(ep: Epochs, window_ms: list[float], channels: list[str] | None) -> np.ndarray:
    """Each epoch's mean over the channels and the inclusive latency window."""
    idx = refs.channel_indices(ep.ch_names, channels)
    mask = window_mask(ep.times, window_ms)
    return ep.data[:, idx, :][:, :, mask].mean(axis=(1, 2))  # type: ignore[no-any-return]


def _trace(ev: Epochs, channel: str | None, condition: str | None, argument: str) -> np.ndarray:
    """One channel of one condition of an evoked response."""
    if condition is None:
        if ev.data.shape[0] != 1:
            raise ToolError("bad_argument", f"{argument}: this holds {ev.data.shape[0]} epochs; average them "
                            "or name a condition", argument=argument)
        row = ev.data[0]
    elif condition in ev.labels:
        row = ev.data[ev.labels.index(condition)]
    else:
        raise ToolError("bad_argument", f"{argument}: no condition {condition!r}; conditions: {ev.labels[:10]}",
                        argument=argument)
    if channel is None:
        if len(ev.ch_names) != 1:
            raise ToolError("bad_argument", f"channel: the response has {len(ev.ch_names)} channels; name one",
                            argument="channel")
        return row[0]  # type: ignore[no-any-return]
    return row[refs.channel_indices(ev.ch_names, [channel], "channel")[0]]  # type: ignore[no-any-return]


_WEIGHTS = np.array([-1.0, 1.0, 1.0, -1.0])  # (a1b2 - a1b1) - (a2b2 - a2b1) over the cell order


def _anova_interaction_p(groups: list[np.ndarray]) -> float:
    """The ANOVA interaction F-test: the contrast's squared pooled-variance t, F(1, N - 4)."""
    from scipy import stats

    n = np.array([len(g) for g in groups], float)
    sse = sum(float(((g - g.mean()) ** 2).sum()) for g in groups)
    df = n.sum() - 4
    contrast = float(_WEIGHTS @ np.array([g.mean() for g in groups]))
    f = contrast ** 2 / (sse / df * float((_WEIGHTS ** 2 / n).sum()))
    return float(stats.f.sf(f, 1, df))


def _welch_contrast_p(groups: list[np.ndarray]) -> float:
    from scipy import stats

    parts = np.array([g.var(ddof=1) / len(g) for g in groups])
    se2 = float(parts.sum())
    df = se2 ** 2 / float((parts ** 2 / np.array([len(g) - 1 for g in groups])).sum())
    t = float(_WEIGHTS @ np.array([g.mean() for g in groups])) / np.sqrt(se2)
    return float(2 * stats.t.sf(abs(t), df))


def _art_interaction_p(groups: list[np.ndarray]) -> float:
    from scipy import stats

    y = np.concatenate(groups)
    cell = np.concatenate([np.full(len(g), i) for i, g in enumerate(groups)])
    a, b = cell // 2, cell % 2
    cell_mean = np.array([g.mean() for g in groups])[cell]
    a_mean = np.array([y[a == k].mean() for k in (0, 1)])[a]
    b_mean = np.array([y[b == k].mean() for k in (0, 1)])[b]
    aligned = (y - cell_mean) + (cell_mean - a_mean - b_mean + y.mean())
    ranks = stats.rankdata(aligned)
    return _anova_interaction_p([ranks[cell == i] for i in range(4)])


def _bootstrap_interval(groups: list[np.ndarray], n: int, seed: int, alpha: float) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    draws = np.zeros(n)
    for w, g in zip(_WEIGHTS, groups):
        draws += w * g[rng.integers(0, len(g), (n, len(g)))].mean(axis=1)
    low, high = np.percentile(draws, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(low), float(high)


def _artifact(file: Path, fmt: str) -> Artifact:
    """An Artifact for a written file, its path as the sandbox shows it."""
    body = Path(str(file)).read_bytes()
    shown = f"/workspace/file_check/{Path(str(file)).resolve().relative_to(paths.output_root().resolve()).as_posix()}"
    return Artifact(shown, fmt, len(body), hashlib.sha256(body).hexdigest())
