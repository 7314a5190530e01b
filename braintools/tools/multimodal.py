"""Multimodal cleaning pipelines: flag windows by a feature, drop or keep epochs, epochs inside
segments (protocol blocks), spectra averaged over kept epochs, joined clean data, two-group
tests, comparisons of two versions of a signal, a choice among named options, tables and plots.

They work with the objects the other tools make: window flags are selections ({"names":
[...]}), so merge_selections combines them (the union of EMG and EOG windows, say); epoch
labels are the names flagged and kept; per-name results ({name: {feature: value}}) feed the
tests and plots. Voltages are µV, times seconds from the recording's start.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pandas as pd

from braintools import paths, refs
from braintools.data import Artifact, Epochs, Signal, Spectrum, Table
from braintools.errors import ToolError
from braintools.registry import New, check_size, result, tool
from braintools.state import STATE
from braintools.tools.features import TimeFeature, time_feature


def _selection_names(selection: str, argument: str = "selection") -> list[str]:
    value = refs.result_value(selection, argument)
    if not isinstance(value, dict) or not isinstance(value.get("names"), list):
        raise ToolError("wrong_kind", f"{argument}: {selection} is not a selection (flag_feature_windows, threshold, merge_selections)",
                        argument=argument)
    return [str(n) for n in value["names"]]


@tool("physiol")
def flag_feature_windows(epochs: str, feature: TimeFeature, threshold: float, channels: list[str] | None = None,
                         direction: Literal["above", "below"] = "above", scale: Literal["absolute", "median"] = "absolute",
                         inclusive: bool = False) -> dict[str, object]:
    """Windows (epochs) whose time-domain feature lies above (or below) a limit on any of the channels, as a selection of their labels.

    The feature is computed per window and channel as time_features does (ddof 0, no
    demeaning). With scale "absolute" the limit is `threshold` itself; with "median" it is
    threshold x the median of that channel's feature over all windows given (e.g. EMG RMS
    above 3 x the median window). "above" flags feature > limit, "below" feature < limit (>=
    and <= with inclusive); a window is flagged when any channel considered passes. The
    selection's names are the flagged windows' labels in window order, so merge_selections
    combines flags and select_epochs_by_label drops them.

    Parameters
    ----------
    epochs : str
        Id of epochs (fixed_windows, epochs_in_segments).
    feature : str
        The time-domain feature, e.g. "rms", "ptp", "max_abs", "std", "min", "max".
    threshold : float
        The limit (scale "absolute"), or the factor on the median (scale "median").
    channels : list of str, optional
        The channels considered (default every channel of the epochs).
    direction : str, optional
        "above" or "below" the limit.
    scale : str, optional
        "absolute" or "median".
    inclusive : bool, optional
        Flag values equal to the limit too.
    """
    ep = refs.epochs(epochs)
    picks = refs.channel_indices(ep.ch_names, channels)
    if ep.data.shape[0] == 0:
        raise ToolError("out_of_range", "epochs: there are no windows to flag", argument="epochs")
    values = time_feature(feature, ep.data[:, picks, :], ep.sfreq, 0)  # (n_windows, n_channels)
    limits = np.full(len(picks), float(threshold)) if scale == "absolute" else float(threshold) * np.median(values, axis=0)
    if direction == "above":
        passed = values >= limits if inclusive else values > limits
    else:
        passed = values <= limits if inclusive else values < limits
    flags = passed.any(axis=1)
    labels = _labels(ep)
    names = [labels[i] for i in np.flatnonzero(flags)]
    chosen = [ep.ch_names[i] for i in picks]
    summary = {"names": names, "count": len(names), "of": len(labels),
               "limits": {ch: float(v) for ch, v in zip(chosen, limits)},
               "windows": [int(i) for i in np.flatnonzero(flags)]}
    frame = pd.DataFrame({"window": np.arange(len(labels)), "label": labels, "onset_s": ep.onsets_s + ep.times[0],
                          **{f"{feature}_{ch}": values[:, j] for j, ch in enumerate(chosen)}, "flagged": flags})
    return {"flags": result("selection", summary, feature=feature, channels=chosen, direction=direction, scale=scale),
            "table": New("results", "tab", Table(frame, "features"))}


def _labels(ep: Epochs) -> list[str]:
    return [str(x) for x in ep.labels] if len(ep.labels) == ep.data.shape[0] else [str(i) for i in range(ep.data.shape[0])]


@tool("physiol")
def select_epochs_by_label(epochs: str, selection: str, keep: bool = False) -> dict[str, object]:
    """Drop the epochs a selection names (or keep only them), with a table of those left out.

    Epochs are matched by label (fixed_windows labels window k as "k"). The table of the
    epochs left out has one row per epoch, in epoch order: label, onset_s (its first sample,
    seconds from the recording's start), duration_s (samples / rate) and end_s. The counts
    give how many epochs were kept and left out, and their total seconds. The kept epochs may
    be none (every window flagged): the counts say so, and tools that need data refuse them.

    Parameters
    ----------
    %(epochs)s
    selection : str
        Id of a selection (flag_feature_windows, merge_selections, threshold) naming epoch labels.
    keep : bool, optional
        Keep only the named epochs instead of dropping them.
    """
    ep = refs.epochs(epochs)
    names = set(_selection_names(selection))
    labels = _labels(ep)
    unknown = sorted(names - set(labels))
    if unknown:
        raise ToolError("bad_argument", f"selection: no epoch labelled {unknown[:10]}", argument="selection")
    named = np.array([label in names for label in labels], bool)
    kept = named if keep else ~named
    duration = ep.data.shape[2] / ep.sfreq
    starts = ep.onsets_s + ep.times[0]
    out = Epochs(ep.data[kept], ep.sfreq, list(ep.ch_names), list(ep.ch_types), ep.times, ep.onsets_s[kept],
                 [lab for lab, k in zip(labels, kept) if k],
                 ep.history + [f"{'kept' if keep else 'dropped'} {int(named.sum())} epochs named by {selection}"])
    left = ~kept
    frame = pd.DataFrame({"label": [lab for lab, k in zip(labels, left) if k], "onset_s": starts[left],
                          "duration_s": duration, "end_s": starts[left] + duration})
    counts = {"kept": int(kept.sum()), "left_out": int(left.sum()), "kept_s": float(kept.sum() * duration),
              "left_out_s": float(left.sum() * duration)}
    return {"epochs": New("views", "ep", out), "left_out": New("events", "evt", Table(frame, "events")), "counts": counts}


@tool("physiol")
def epochs_in_segments(source: str, segments: str, epoch_s: float, trim_s: float = 0.0,
                   channels: list[str] | None = None, label_column: str = "label") -> dict[str, object]:
    """Consecutive epochs of epoch_s seconds inside each segment of a table (onset_s, duration_s), e.g. marker blocks.

    A segment covers samples round(onset_s * sfreq) up to round((onset_s + duration_s) * sfreq),
    exclusive. trim_s seconds (round(trim_s * sfreq) samples) are left out at both of its ends;
    from the trimmed start, epochs of round(epoch_s * sfreq) samples follow each other without
    gap or overlap, and a last incomplete one is dropped. Epoch k (from 1) of a segment labelled
    L is labelled "L_k".

    Parameters
    ----------
    %(source_filter_whole)s
    %(segments)s
    epoch_s : float
        Epoch length in seconds.
    trim_s : float, optional
        Seconds left out at the start and at the end of every segment.
    channels : list of str, optional
        Channels kept in the epochs (default all).
    label_column : str, optional
        The column naming each segment (default "label"; row numbers from 1 when absent).
    """
    sig = refs.signal(source)
    frame = refs.table(segments, "segments").frame
    for column in ("onset_s", "duration_s"):
        if column not in frame.columns:
            raise ToolError("bad_argument", f"segments: no column {column!r}; columns: {list(frame.columns)}", argument="segments")
    length = int(round(epoch_s * sig.sfreq))
    trim = int(round(trim_s * sig.sfreq))
    if length < 2 or trim < 0:
        raise ToolError("bad_argument", "epoch_s/trim_s: an epoch needs at least 2 samples and the trim must not be negative",
                        argument="epoch_s")
    picks = refs.channel_indices(sig.ch_names, channels)
    first = int(round(sig.start_s * sig.sfreq))
    starts: list[int] = []
    labels: list[str] = []
    for row_number, row in enumerate(frame.itertuples(index=False), start=1):
        onset, duration = float(getattr(row, "onset_s")), float(getattr(row, "duration_s"))
        a = int(round(onset * sig.sfreq)) - first + trim
        b = int(round((onset + duration) * sig.sfreq)) - first - trim
        if a < 0 or b > sig.n_samples:
            raise ToolError("out_of_range", f"segments: the segment at {onset:g} s is not inside the signal", argument="segments")
        name = str(getattr(row, label_column)) if label_column in frame.columns else str(row_number)
        for k in range(max(0, (b - a) // length)):
            starts.append(a + k * length)
            labels.append(f"{name}_{k + 1}")
    if not starts:
        raise ToolError("out_of_range", "epoch_s: no segment holds a whole epoch", argument="epoch_s")
    check_size(len(starts) * len(picks) * length, "the epochs")
    data = np.stack([sig.data[picks, s:s + length] for s in starts])
    onsets = (np.asarray(starts) + first) / sig.sfreq
    out = Epochs(data, sig.sfreq, [sig.ch_names[i] for i in picks], [sig.ch_types[i] for i in picks],
                 np.arange(length) / sig.sfreq, onsets, labels,
                 sig.history + [f"{epoch_s:g}-s epochs in {len(frame)} segments, {trim_s:g} s trimmed"])
    per_segment = pd.Series([lab.rsplit("_", 1)[0] for lab in labels]).value_counts(sort=False).to_dict()
    return {"epochs": New("views", "ep", out), "per_segment": {str(k): int(v) for k, v in per_segment.items()}}


@tool("physiol")
def average_epoch_spectrum(spectrum: str, how: Literal["mean", "median"] = "mean") -> dict[str, object]:
    """The spectrum of epochs averaged over the epochs (bin by bin), one PSD per channel.

    The mean of per-epoch PSDs of equal-length epochs is Welch's estimate over those epochs
    (segments = the epochs), so this gives the spectrum of the kept (clean) data.

    Parameters
    ----------
    spectrum : str
        Id of a spectrum computed from epochs (compute_psd on epochs).
    how : str, optional
        "mean" or "median" over epochs.
    """
    spec: Spectrum = STATE.get(spectrum, "spectrum", (Spectrum,)).value
    if spec.power.ndim != 3:
        raise ToolError("wrong_kind", f"spectrum: {spectrum} is not a spectrum of epochs", argument="spectrum")
    reduce = np.mean if how == "mean" else np.median
    power = np.asarray(reduce(spec.power, axis=0))
    out = Spectrum(spec.freqs, power, list(spec.ch_names), f"{spec.method}, {how} of {spec.power.shape[0]} epochs")
    return {"spectrum": New("views", "psd", out)}


@tool("physiol")
def join_epochs(epochs: str) -> dict[str, object]:
    """Join epochs end to end, in order, into one continuous signal (e.g. the clean windows, to save them).

    The signal starts at 0 s; its length is the number of epochs times their length.
    Joins are not smoothed.

    Parameters
    ----------
    %(epochs)s
    """
    ep = refs.epochs(epochs)
    if ep.data.shape[0] == 0:
        raise ToolError("out_of_range", "epochs: there are no epochs to join", argument="epochs")
    data = np.concatenate(list(ep.data), axis=1)
    out = Signal(data, ep.sfreq, list(ep.ch_names), list(ep.ch_types), 0.0,
                 ep.history + [f"{ep.data.shape[0]} epochs joined"])
    return {"signal": New("views", "sig", out)}


def _path_value(record: Any, feature: str | None, name: str, argument: str) -> float:
    value = record
    for part in (feature.split(".") if feature else []):
        if not isinstance(value, dict) or part not in value:
            raise ToolError("bad_argument", f"feature: {name!r} has no {feature!r}", argument="feature")
        value = value[part]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ToolError("bad_argument", f"feature: {name}'s {feature!r} is not a number (give a feature path)",
                        argument="feature")
    return float(value)


def _values(result_id: str, feature: str | None, argument: str) -> dict[str, float]:
    value = refs.result_value(result_id, argument)
    if not isinstance(value, dict) or not value:
        raise ToolError("wrong_kind", f"{argument}: {result_id} is not a per-name result", argument=argument)
    return {str(name): _path_value(record, feature, str(name), argument) for name, record in value.items()}


_TRANSFORMS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "none": lambda x: x, "log10": np.log10, "db": lambda x: 10 * np.log10(x),
}


@tool("physiol")
def two_group_test(a: str, b: str, feature: str | None = None, transform: Literal["none", "log10", "db"] = "none",
                    test: Literal["welch_t", "student_t", "mann_whitney", "paired_t", "wilcoxon"] = "welch_t",
                    alternative: Literal["two-sided", "greater", "less"] = "two-sided", alpha: float = 0.05) -> dict[str, object]:
    """Compare the values of two per-name results (two groups of epochs, blocks, subjects) with a statistical test.

    Each group's values are the feature of every name (a dotted path for nested records, e.g.
    "O1.alpha" in band_power of epochs), transformed first ("db" = 10 log10). Tests are
    scipy.stats': ttest_ind with equal_var False (welch_t) or True (student_t), mannwhitneyu,
    ttest_rel (paired_t) and wilcoxon (paired: names matched in a's order). The statistic is
    a's minus b's direction; significant means p < alpha. mean_a and mean_b are the means of
    the values before the transform, mean_a_t and mean_b_t after it.

    Parameters
    ----------
    a : str
        Id of the first group's per-name result.
    b : str
        Id of the second group's per-name result.
    feature : str, optional
        The feature inside each name's record (dotted path), omitted when names map to numbers.
    transform : str, optional
        "none", "log10" or "db" applied before the test.
    test : str, optional
        Which test.
    alternative : str, optional
        "two-sided", "greater" (a > b) or "less".
    alpha : float, optional
        The significance level.
    """
    from scipy import stats

    va, vb = _values(a, feature, "a"), _values(b, feature, "b")
    paired = test in ("paired_t", "wilcoxon")
    if paired:
        common = [n for n in va if n in vb]
        if len(common) < 2:
            raise ToolError("bad_argument", "b: a paired test needs at least 2 names in both results", argument="b")
        xa, xb = np.array([va[n] for n in common]), np.array([vb[n] for n in common])
    else:
        xa, xb = np.array(list(va.values())), np.array(list(vb.values()))
    if len(xa) < 2 or len(xb) < 2:
        raise ToolError("bad_argument", "a/b: each group needs at least 2 values", argument="a")
    if transform != "none" and (np.any(xa <= 0) or np.any(xb <= 0)):
        raise ToolError("bad_argument", f"transform: {transform} needs positive values", argument="transform")
    ta, tb = _TRANSFORMS[transform](xa), _TRANSFORMS[transform](xb)
    runs: dict[str, Callable[[], Any]] = {
        "welch_t": lambda: stats.ttest_ind(ta, tb, equal_var=False, alternative=alternative),
        "student_t": lambda: stats.ttest_ind(ta, tb, equal_var=True, alternative=alternative),
        "mann_whitney": lambda: stats.mannwhitneyu(ta, tb, alternative=alternative),
        "paired_t": lambda: stats.ttest_rel(ta, tb, alternative=alternative),
        "wilcoxon": lambda: stats.wilcoxon(ta, tb, alternative=alternative),
    }
    outcome = runs[test]()
    p = float(outcome.pvalue)
    summary = {"test": test, "statistic": float(outcome.statistic), "p_value": p, "significant": bool(p < alpha),
               "alpha": alpha, "n_a": int(len(xa)), "n_b": int(len(xb)), "mean_a": float(xa.mean()),
               "mean_b": float(xb.mean()), "mean_a_t": float(ta.mean()), "mean_b_t": float(tb.mean())}
    df = getattr(outcome, "df", None)
    if df is not None:
        summary["df"] = float(df)
    return {"test": result("two_group_test", summary, transform=transform, alternative=alternative, feature=feature)}


@tool("physiol")
def compare_versions(source: str, reference: str, channels: list[str] | None = None,
                     demean: bool = False) -> dict[str, object]:
    """Channel by channel comparison of two versions of the same data (e.g. cleaned vs uncleaned): correlation, power change and difference.

    Both signals must have the same rate and length; channels are matched by name. Per
    channel: Pearson r, rms and rms_reference (root mean square of each), power_change_db =
    10 log10(mean square of source / mean square of reference) (negative when the source
    holds less power) and rms_difference (root mean square of source - reference). "pooled"
    gives the same over all compared channels' samples together. Means are not removed
    unless demean (then each channel's mean is removed from each version first).

    Parameters
    ----------
    source : str
        Id of the signal compared (e.g. a cleaned version).
    reference : str
        Id of the signal it is compared with.
    channels : list of str, optional
        Channels compared (default every channel of source).
    demean : bool, optional
        Remove each channel's mean first.
    """
    sig, ref = refs.signal(source), refs.signal(reference, "reference")
    if sig.n_samples != ref.n_samples or sig.sfreq != ref.sfreq:
        raise ToolError("bad_argument", f"reference: {ref.n_samples} samples at {ref.sfreq:g} Hz, source "
                        f"{sig.n_samples} at {sig.sfreq:g} Hz; crop them alike", argument="reference")
    picks = refs.channel_indices(sig.ch_names, channels)
    rpicks = refs.channel_indices(ref.ch_names, [sig.ch_names[i] for i in picks], "reference")
    x, y = sig.data[picks], ref.data[rpicks]
    if demean:
        x, y = x - x.mean(axis=1, keepdims=True), y - y.mean(axis=1, keepdims=True)

    def measures(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
        pa, pb = float(np.mean(a ** 2)), float(np.mean(b ** 2))
        r = float(np.corrcoef(a.ravel(), b.ravel())[0, 1]) if a.std() > 0 and b.std() > 0 else float("nan")
        change = float(10 * np.log10(pa / pb)) if pa > 0 and pb > 0 else float("nan")
        return {"r": r, "rms": float(np.sqrt(pa)), "rms_reference": float(np.sqrt(pb)), "power_change_db": change,
                "rms_difference": float(np.sqrt(np.mean((a - b) ** 2)))}

    out = {sig.ch_names[i]: measures(x[j], y[j]) for j, i in enumerate(picks)}
    return {"comparison": result("signal_comparison", out), "pooled": result("signal_comparison_pooled", measures(x, y))}


@tool("physiol")
def choose_best_option(scores: dict[str, float], prefer: Literal["max", "min"] = "max",
                       guards: dict[str, float] | None = None, guard_min: float | None = None,
                       guard_max: float | None = None) -> dict[str, object]:
    """The named option with the best score, among those whose guard value lies within limits.

    An option is eligible when its guard value (if guards are given) is >= guard_min and <=
    guard_max (each limit only when given). Among eligible options the largest ("max") or
    smallest ("min") score wins; a tie goes to the option named first. choice is null when
    none is eligible.

    Parameters
    ----------
    scores : dict of str to float
        Option name -> score (e.g. artefact reduction in dB per cleaning method).
    prefer : str, optional
        "max" or "min" score wins.
    guards : dict of str to float, optional
        Option name -> guard value (e.g. how much a method changes artefact-free data).
    guard_min : float, optional
        Smallest allowed guard value.
    guard_max : float, optional
        Largest allowed guard value.
    """
    if not scores:
        raise ToolError("bad_argument", "scores: give at least one option", argument="scores")
    if guards is None and (guard_min is not None or guard_max is not None):
        raise ToolError("bad_argument", "guards: give the guard values the limits apply to", argument="guards")
    missing = [n for n in scores if guards is not None and n not in guards]
    if missing:
        raise ToolError("bad_argument", f"guards: no value for {missing}", argument="guards")

    def allowed(name: str) -> bool:
        if guards is None:
            return True
        value = guards[name]
        return (guard_min is None or value >= guard_min) and (guard_max is None or value <= guard_max)

    eligible = [n for n in scores if allowed(n)]
    choice = None
    for name in eligible:
        if choice is None or (scores[name] > scores[choice] if prefer == "max" else scores[name] < scores[choice]):
            choice = name
    return {"choice": result("choice", {"choice": choice, "eligible": eligible,
                                        "score": scores[choice] if choice is not None else None})}


@tool("physiol")
def tabulate_rows(rows: dict[str, dict[str, float | str]], name_column: str = "name") -> dict[str, object]:
    """A table (and the same per-name result) from values gathered by name, e.g. one row per file or condition.

    Rows keep the order given; columns are the union of the rows' keys in first-seen order
    (a row without a key gets an empty cell).

    Parameters
    ----------
    rows : dict of str to dict
        Row name -> {column: value}.
    name_column : str, optional
        The name of the first column, which holds the row names.
    """
    if not rows:
        raise ToolError("bad_argument", "rows: give at least one row", argument="rows")
    columns: list[str] = []
    for record in rows.values():
        if not isinstance(record, dict):
            raise ToolError("bad_argument", "rows: each row is an object of {column: value}", argument="rows")
        columns += [c for c in record if c not in columns]
    if name_column in columns:
        raise ToolError("bad_argument", f"name_column: {name_column!r} is also a column", argument="name_column")
    frame = pd.DataFrame([{name_column: name, **record} for name, record in rows.items()], columns=[name_column, *columns])
    return {"table": New("results", "tab", Table(frame, "features")), "values": result("table_rows", rows)}


@tool("physiol")
def plot_group_values(results: list[str], path: str, feature: str | None = None, labels: list[str] | None = None,
                transform: Literal["none", "log10", "db"] = "none", title: str | None = None,
                ylabel: str | None = None) -> dict[str, object]:
    """Save a PNG comparing groups of values: one box with its points per per-name result (e.g. epochs per condition).

    Parameters
    ----------
    results : list of str
        Ids of per-name results, one per group.
    path : str
        Output file under /workspace/file_check, e.g. "file_check/groups.png".
    feature : str, optional
        The feature inside each name's record (dotted path).
    labels : list of str, optional
        One label per group (default the result ids).
    transform : str, optional
        "none", "log10" or "db" applied to the values shown.
    %(title)s
    ylabel : str, optional
        Y axis label.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not results:
        raise ToolError("bad_argument", "results: give at least one result id", argument="results")
    if labels is not None and len(labels) != len(results):
        raise ToolError("bad_argument", f"labels: {len(labels)} labels for {len(results)} groups", argument="labels")
    if not path.lower().endswith(".png"):
        raise ToolError("unsupported", "path: the figure is written as PNG (name it *.png)", argument="path")
    groups = [np.array(list(_values(r, feature, "results").values())) for r in results]
    if transform != "none" and any(np.any(g <= 0) for g in groups):
        raise ToolError("bad_argument", f"transform: {transform} needs positive values", argument="transform")
    shown = [_TRANSFORMS[transform](g) for g in groups]
    file = paths.output_path(path)
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.boxplot(shown, showfliers=False)
    for k, g in enumerate(shown, start=1):
        ax.plot(np.full(len(g), k) + np.linspace(-0.12, 0.12, len(g)), g, "o", ms=3, alpha=0.6)
    ax.set_xticks(range(1, len(shown) + 1), labels or results)
    ax.set(title=title or "", ylabel=ylabel or (feature or "value"))
    fig.tight_layout()
    fig.savefig(file, format="png", dpi=100)
    plt.close(fig)
    return {"artifact": New("artifacts", "art", _artifact(file, "png"))}


def _artifact(file: Any, fmt: str) -> Artifact:
    import hashlib
    from pathlib import Path

    written = Path(str(file))
    body = written.read_bytes()
    relative = written.resolve().relative_to(paths.output_root().resolve()).as_posix()
    return Artifact(f"file_check/{relative}", fmt, len(body), hashlib.sha256(body).hexdigest())
