"""Sleep reports: hypnograms summarised over time (blocks, parts of the sleep period, NREM-REM
cycles), drawn as a figure, compared across scorers and nights (epoch-by-epoch agreement per
stage and per night, Bland-Altman discrepancies), and combined with signals (events per stage,
band power per stage).

Hypnograms are the "hypnogram" tables of the labels branch (load_hypnogram, auto_stage): one
row per scoring epoch with `epoch`, `onset_s`, `stage`, and `group` when one table holds
several nights. Which labels mean wake or REM is always a parameter.
"""
from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from braintools import paths, refs
from braintools.data import Artifact, Table
from braintools.errors import ToolError
from braintools.registry import New, result, tool

# ----------------------------------------------------------------------------- helpers


def hypnogram_entry(entry_id: str, argument: str = "hypnogram", single: bool = True) -> Table:
    """The non-empty hypnogram `entry_id` names (one night unless not `single`); ToolError naming `argument`."""
    table = refs.table(entry_id, argument)
    if table.kind != "hypnogram":
        raise ToolError("wrong_kind", f"{argument}: {entry_id} is a {table.kind} table, not a hypnogram", argument=argument)
    if single and "group" in table.frame.columns:
        raise ToolError("unsupported", f"{argument}: {entry_id} holds several hypnograms (groups); load one at a time",
                        argument=argument)
    if table.frame.empty:
        raise ToolError("bad_argument", f"{argument}: {entry_id} is empty", argument=argument)
    return table


def stage_labels(hyp: Table) -> np.ndarray:
    """The hypnogram's stage of each epoch, as text."""
    return np.asarray(hyp.frame["stage"].astype(str).to_numpy())


def stages_or_all(hyp: Table, stages: list[str] | None) -> list[str]:
    """`stages` when given, else the hypnogram's labels (its coding's, or those it holds)."""
    return list(stages) if stages else [str(s) for s in hyp.meta.get("labels", sorted(set(stage_labels(hyp))))]


def _known(hyp: Table, names: list[str], argument: str) -> None:
    present = set(stage_labels(hyp)) | {str(s) for s in hyp.meta.get("labels", [])}
    unknown = [n for n in names if n not in present]
    if unknown:
        raise ToolError("bad_argument", f"{argument}: labels {unknown} are not in the hypnogram "
                        f"(labels: {sorted(present)})", argument=argument)


def _sleep_span(labels: np.ndarray, wake: list[str]) -> tuple[int, int]:
    """[first, last] 0-based positions of the non-wake epochs; ToolError when there is no sleep."""
    asleep = np.flatnonzero(~np.isin(labels, wake))
    if not len(asleep):
        raise ToolError("bad_argument", "wake: every epoch is wake; there is no sleep period", argument="wake")
    return int(asleep[0]), int(asleep[-1])


def _number(x: float) -> float | int:
    return int(x) if float(x).is_integer() else float(x)


def _write_artifact(file: Path, fmt: str) -> New:
    data = file.read_bytes()
    shown = f"file_check/{file.relative_to(paths.output_root().resolve()).as_posix()}"
    return New("artifacts", "art", Artifact(shown, fmt, len(data), hashlib.sha256(data).hexdigest()))


def _dig(value: Any, path: str, where: str, argument: str) -> float:
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            raise ToolError("bad_argument", f"{argument}: {path!r} is not in {where}", argument=argument)
        value = value[part]
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise ToolError("bad_argument", f"{argument}: {path!r} of {where} is not a number ({value!r})", argument=argument)
    return float(value)


# ----------------------------------------------------------------------------- time course of one night


@tool("sleep")
def stage_time_table(hypnogram: str, block_min: float = 60.0, stages: list[str] | None = None,
                     index_name: str = "block", column_names: dict[str, str] | None = None) -> dict[str, object]:
    """Minutes of each stage in consecutive blocks of the recording (e.g. per hour), as a table and a per-block result.

    Block k (numbered from 1) holds the epochs at positions (k-1)*n .. k*n-1 of the hypnogram,
    n = block_min * 60 / epoch_s; the last block may be shorter. Blocks count from the first
    epoch, whatever its stage.

    Parameters
    ----------
    %(hypnogram_night)s
    block_min : float, optional
        Block length in minutes; must be a whole number of epochs.
    stages : list of str, optional
        The stages tabulated, in this order (default: the coding's labels).
    index_name : str, optional
        Name of the block-number column.
    column_names : dict of str to str, optional
        Stage label -> column name (default: "<label>_min").
    """
    hyp = hypnogram_entry(hypnogram)
    labels, epoch_s = stage_labels(hyp), float(hyp.meta["epoch_s"])
    names = stages_or_all(hyp, stages)
    per_block = block_min * 60.0 / epoch_s
    if block_min <= 0 or not float(per_block).is_integer():
        raise ToolError("bad_argument", f"block_min: {block_min} min is not a whole number of {epoch_s:g}-s epochs",
                        argument="block_min")
    columns = {s: (column_names or {}).get(s, f"{s}_min") for s in names}
    if index_name in columns.values() or len(set(columns.values())) != len(columns):
        raise ToolError("bad_argument", "column_names: column names must be distinct", argument="column_names")
    n = int(per_block)
    rows = []
    for k, start in enumerate(range(0, len(labels), n), start=1):
        block = labels[start:start + n]
        rows.append({index_name: k, **{columns[s]: _number(int((block == s).sum()) * epoch_s / 60.0) for s in names}})
    frame = pd.DataFrame(rows, columns=[index_name, *columns.values()])
    per_name = {str(r[index_name]): {c: r[c] for c in columns.values()} for r in rows}
    return {"table": New("labels", "lab", Table(frame, "stage_table", {"block_min": block_min, "epoch_s": epoch_s})),
            "blocks": result("stage_time_table", per_name, block_min=block_min)}


@tool("sleep")
def stage_distribution(hypnogram: str, wake: list[str], parts: int = 2, stages: list[str] | None = None) -> dict[str, object]:
    """How each stage is spread over consecutive equal parts of the sleep period (first to last non-wake epoch).

    With L epochs in the sleep period, part i (numbered from 1) holds the positions
    floor((i-1)*L/parts) .. floor(i*L/parts)-1 of it (with 2 parts and odd L the middle epoch
    goes to the second half). Per part and stage: minutes, and the percentage of that stage's
    sleep-period minutes falling in the part (null when the stage is absent).

    Parameters
    ----------
    %(hypnogram_night)s
    %(wake)s
    parts : int, optional
        Number of parts.
    %(stages)s
    """
    hyp = hypnogram_entry(hypnogram)
    if parts < 1:
        raise ToolError("bad_argument", "parts: must be at least 1", argument="parts")
    labels, epoch_min = stage_labels(hyp), float(hyp.meta["epoch_s"]) / 60.0
    first, last = _sleep_span(labels, wake)
    period = labels[first:last + 1]
    size = len(period)
    if parts > size:
        raise ToolError("bad_argument", f"parts: the sleep period has only {size} epochs", argument="parts")
    names = stages_or_all(hyp, stages)
    totals = {s: int((period == s).sum()) for s in names}
    out: dict[str, Any] = {}
    for i in range(parts):
        lo, hi = (i * size) // parts, ((i + 1) * size) // parts
        chunk = period[lo:hi]
        out[str(i + 1)] = {"first_epoch": int(hyp.frame["epoch"].iloc[first + lo]),
                           "last_epoch": int(hyp.frame["epoch"].iloc[first + hi - 1]), "minutes": (hi - lo) * epoch_min,
                           **{s: {"minutes": int((chunk == s).sum()) * epoch_min,
                                  "share_pct": 100.0 * int((chunk == s).sum()) / totals[s] if totals[s] else None}
                              for s in names}}
    return {"distribution": result("stage_distribution", out, parts=parts, sleep_period_epochs=size)}


@tool("sleep")
def cycle_table(hypnogram: str, wake: list[str], rem: list[str], merge_gap_min: float = 15.0,
                 stages: list[str] | None = None) -> dict[str, object]:
    """NREM-REM cycles of one night: REM periods, then cycles that each end with a REM period, as a table and a summary.

    REM periods: consecutive REM epochs form episodes; two episodes belong to the same REM
    period when fewer than merge_gap_min minutes of other epochs separate them (a REM period
    runs from its first to its last REM epoch, the epochs between included). Cycle 1 starts
    at sleep onset (the first non-wake epoch); cycle k+1 starts at the epoch after REM period
    k; cycle k ends with the last epoch of REM period k. Epochs after the last REM period
    belong to no cycle. Table columns: cycle, start_epoch, end_epoch (epoch numbers, both
    included), duration_min, nrem_period_min (from the start of the cycle to the start of its
    REM period), rem_period_min, then "<stage>_min" per stage; the summary also gives each
    stage's share (percent) of the night's minutes of that stage per cycle.

    Parameters
    ----------
    %(hypnogram_night)s
    %(wake)s
    rem : list of str
        Labels that count as REM.
    merge_gap_min : float, optional
        REM episodes closer than this (minutes of other epochs between them) are one REM period.
    stages : list of str, optional
        The stages whose minutes are tabulated per cycle (default: the coding's labels).
    """
    hyp = hypnogram_entry(hypnogram)
    _known(hyp, rem, "rem")
    if merge_gap_min < 0:
        raise ToolError("bad_argument", "merge_gap_min: must not be negative", argument="merge_gap_min")
    labels, epoch_min = stage_labels(hyp), float(hyp.meta["epoch_s"]) / 60.0
    numbers = hyp.frame["epoch"].astype(int).to_numpy()
    onset, last_sleep = _sleep_span(labels, wake)
    periods: list[list[int]] = []
    for pos in np.flatnonzero(np.isin(labels, rem)):
        gap = pos - periods[-1][1] - 1 if periods else None
        if gap is not None and (gap == 0 or gap * epoch_min < merge_gap_min):
            periods[-1][1] = int(pos)
        else:
            periods.append([int(pos), int(pos)])
    names = stages_or_all(hyp, stages)
    night = {s: int((labels == s).sum()) for s in names}
    rows, shares, start = [], {}, onset
    for k, (a, b) in enumerate(periods, start=1):
        chunk = labels[start:b + 1]
        counts = {s: int((chunk == s).sum()) for s in names}
        rows.append({"cycle": k, "start_epoch": int(numbers[start]), "end_epoch": int(numbers[b]),
                     "duration_min": _number((b - start + 1) * epoch_min), "nrem_period_min": _number((a - start) * epoch_min),
                     "rem_period_min": _number((b - a + 1) * epoch_min),
                     **{f"{s}_min": _number(counts[s] * epoch_min) for s in names}})
        shares[str(k)] = {s: (100.0 * counts[s] / night[s] if night[s] else None) for s in names}
        start = b + 1
    columns = ["cycle", "start_epoch", "end_epoch", "duration_min", "nrem_period_min", "rem_period_min",
               *[f"{s}_min" for s in names]]
    frame = pd.DataFrame(rows, columns=columns)
    durations = [r["duration_min"] for r in rows]
    summary: dict[str, Any] = {
        "n_cycles": len(rows), "n_rem_periods": len(periods),
        "mean_cycle_min": float(np.mean(durations)) if rows else None,
        "sleep_onset_epoch": int(numbers[onset]), "last_sleep_epoch": int(numbers[last_sleep]),
        "after_last_cycle_min": (last_sleep - (periods[-1][1] if periods else onset - 1)) * epoch_min,
        "cycles": {str(r["cycle"]): {**{c: r[c] for c in columns if c != "cycle"}, "share_pct": shares[str(r["cycle"])]}
                   for r in rows},
    }
    if rows:
        summary["first"] = summary["cycles"]["1"]
        summary["last"] = summary["cycles"][str(len(rows))]
    return {"cycles": New("labels", "lab", Table(frame, "cycles", {"merge_gap_min": merge_gap_min})),
            "summary": result("cycle_table", summary, merge_gap_min=merge_gap_min)}


@tool("sleep")
def plot_hypnogram(hypnogram: str, path: str, order: list[str] | None = None, title: str | None = None,
                   time_unit: Literal["h", "min"] = "h") -> dict[str, object]:
    """Draw a hypnogram as a step plot (stages on the y axis, time from the first epoch on the x axis) and save it as PNG.

    Parameters
    ----------
    %(hypnogram_night)s
    path : str
        Output file under /workspace/file_check, e.g. "file_check/hypnogram.png".
    order : list of str, optional
        Stage labels from the top of the axis to the bottom (default: the coding's labels).
    %(title)s
    time_unit : str, optional
        Unit of the time axis.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hyp = hypnogram_entry(hypnogram)
    labels, epoch_s = stage_labels(hyp), float(hyp.meta["epoch_s"])
    levels = stages_or_all(hyp, order)
    missing = sorted(set(labels) - set(levels))
    if missing:
        raise ToolError("bad_argument", f"order: the hypnogram also holds {missing}", argument="order")
    if not path.lower().endswith(".png"):
        raise ToolError("unsupported", "path: the hypnogram is written as PNG (name it *.png)", argument="path")
    file = paths.output_path(path)
    scale = 3600.0 if time_unit == "h" else 60.0
    y = np.array([len(levels) - 1 - levels.index(s) for s in labels] + [len(levels) - 1 - levels.index(labels[-1])])
    t = np.arange(len(labels) + 1) * epoch_s / scale
    fig, ax = plt.subplots(figsize=(9, 3))
    ax.step(t, y, where="post", color="k", linewidth=1)
    ax.set_yticks(range(len(levels)), list(reversed(levels)))
    ax.set(xlabel=f"time ({time_unit})", xlim=(0, t[-1]), title=title or "hypnogram")
    fig.tight_layout()
    fig.savefig(file, format="png", dpi=100)
    plt.close(fig)
    return {"artifact": _write_artifact(file, "png")}


# ----------------------------------------------------------------------------- scorers and nights


@tool("sleep")
def night_summary(hypnogram: str, wake: list[str], stages: list[str] | None = None) -> dict[str, object]:
    """Standard summary measures of each night in one flat record, for comparing nights or scorers: per group, or for the one night.

    tib_min = all epochs; tst_min = epochs not in `wake`; spt_min = first to last sleep epoch;
    sol_min = epochs before the first sleep epoch; waso_min = wake epochs inside the SPT;
    sleep_efficiency = 100 x TST / TIB; then "<label>_min" (minutes) and "<label>_pct_tst"
    (percent of TST) per stage. Also a table with one row per night (column "night" first).

    Parameters
    ----------
    hypnogram : str
        Id of a hypnogram (one night, or several as groups).
    %(wake)s
    stages : list of str, optional
        The stages given minutes and percentages (default: the coding's labels).
    """
    hyp = hypnogram_entry(hypnogram, single=False)
    names = stages_or_all(hyp, stages)
    epoch_min = float(hyp.meta["epoch_s"]) / 60.0
    frame = hyp.frame
    groups = [str(g) for g in dict.fromkeys(frame["group"].astype(str))] if "group" in frame.columns else [None]
    records: dict[str, dict[str, Any]] = {}
    for g in groups:
        labels = stage_labels(hyp) if g is None else frame.loc[frame["group"].astype(str) == g, "stage"].astype(str).to_numpy()
        asleep = ~np.isin(labels, wake)
        n_sleep = int(asleep.sum())
        first, last = _sleep_span(labels, wake) if n_sleep else (len(labels), len(labels) - 1)
        record: dict[str, Any] = {
            "tib_min": len(labels) * epoch_min, "tst_min": n_sleep * epoch_min,
            "spt_min": max(0, last - first + 1) * epoch_min, "sol_min": first * epoch_min,
            "waso_min": int((~asleep[first:last + 1]).sum()) * epoch_min,
            "sleep_efficiency": 100.0 * n_sleep / len(labels) if len(labels) else None}
        for s in names:
            count = int((labels == s).sum())
            record[f"{s}_min"] = count * epoch_min
            record[f"{s}_pct_tst"] = 100.0 * count / n_sleep if n_sleep else None
        records["night" if g is None else g] = record
    table = pd.DataFrame([{"night": k, **v} for k, v in records.items()])
    value = records if groups != [None] else records["night"]
    return {"summary": result("night_summary", value), "table": New("labels", "lab", Table(table, "night_summary"))}


@tool("sleep")
def epoch_agreement(reference: str, other: str, labels: list[str] | None = None) -> dict[str, object]:
    """Epoch-by-epoch agreement of two scorings, pooled over all epochs and per night (group): kappa, accuracy, per-stage sensitivity and PPV.

    Pooled: every epoch of every group counts once. Sensitivity of a label = 100 x epochs that
    both give it / epochs the reference gives it; PPV = 100 x the same / epochs the other
    gives it (null when the denominator is 0); Cohen's kappa is unweighted over `labels`.
    With groups (several nights in one table) both hypnograms must hold the same groups with
    the same number of epochs each; the per-group output then has one record per group.

    Parameters
    ----------
    %(reference)s
    other : str
        Id of the hypnogram compared (columns).
    labels : list of str, optional
        The label set (default: every label either holds, sorted).
    """
    ref, oth = hypnogram_entry(reference, "reference", single=False), hypnogram_entry(other, "other", single=False)
    a, b = stage_labels(ref), stage_labels(oth)
    groups_a = ref.frame["group"].astype(str).to_numpy() if "group" in ref.frame.columns else np.full(len(a), "all")
    groups_b = oth.frame["group"].astype(str).to_numpy() if "group" in oth.frame.columns else np.full(len(b), "all")
    if len(a) != len(b) or not np.array_equal(groups_a, groups_b):
        raise ToolError("bad_argument", f"other: its epochs ({len(b)}) or groups do not line up with the reference's ({len(a)})",
                        argument="other")
    names = list(labels) if labels else sorted(set(a) | set(b))
    pooled = _agreement(a, b, names)
    per_group = {g: {k: v for k, v in _agreement(a[groups_a == g], b[groups_a == g], names).items() if k != "confusion"}
                 for g in dict.fromkeys(groups_a)}
    return {"agreement": result("epoch_agreement", pooled, labels=names),
            "per_group": result("epoch_agreement_per_group", per_group, labels=names)}


def _agreement(a: np.ndarray, b: np.ndarray, names: list[str]) -> dict[str, Any]:
    index = {n: i for i, n in enumerate(names)}
    keep = np.array([x in index and y in index for x, y in zip(a, b)], bool)
    matrix = np.zeros((len(names), len(names)), int)
    np.add.at(matrix, (np.array([index[x] for x in a[keep]], int), np.array([index[y] for y in b[keep]], int)), 1)
    n = int(matrix.sum())
    observed = float(np.trace(matrix)) / n if n else None
    expected = float(matrix.sum(axis=1) @ matrix.sum(axis=0)) / n**2 if n else None
    kappa = (observed - expected) / (1.0 - expected) if n and expected is not None and observed is not None and expected < 1 else None
    rows, cols = matrix.sum(axis=1), matrix.sum(axis=0)
    return {"n_epochs": len(a), "n_compared": n, "accuracy_pct": 100.0 * float(np.mean(a == b)) if len(a) else None,
            "kappa": kappa,
            "sensitivity_pct": {s: (100.0 * matrix[i, i] / rows[i] if rows[i] else None) for i, s in enumerate(names)},
            "ppv_pct": {s: (100.0 * matrix[i, i] / cols[i] if cols[i] else None) for i, s in enumerate(names)},
            "confusion": {r: {c: int(matrix[i, j]) for j, c in enumerate(names)} for i, r in enumerate(names)}}


@tool("sleep")
def bland_altman(reference: str, other: str, feature: str, feature_other: str | None = None, limits_sd: float = 1.96,
                 ddof: int = 1, columns: list[str] | None = None) -> dict[str, object]:
    """Bland-Altman discrepancy of two per-name results (e.g. one metric per night from two scorers): per name and overall.

    Per name: difference = other - reference and their mean. Overall: bias = mean difference,
    sd = standard deviation of the differences (`ddof`), limits of agreement = bias -/+
    limits_sd x sd, and the proportional-bias slope (least-squares regression of the
    differences on the means). Also a table, one row per name in the reference's order.

    Parameters
    ----------
    reference : str
        Id of the reference per-name result, e.g. sleep_metrics of a grouped hypnogram.
    other : str
        Id of the per-name result compared (the same names).
    feature : str
        Dot-separated path to the number inside each name's record, e.g. "tst_min" or "N3.minutes".
    feature_other : str, optional
        The path inside `other`'s records (default: `feature`).
    limits_sd : float, optional
        Half-width of the limits of agreement, in standard deviations.
    ddof : int, optional
        Delta degrees of freedom of the standard deviation (1: sample SD).
    columns : list of str, optional
        The table's four column names: name, reference value, other value, difference.
    """
    ref, oth = refs.result_value(reference, "reference"), refs.result_value(other, "other")
    if not isinstance(ref, dict) or not isinstance(oth, dict) or not ref:
        raise ToolError("wrong_kind", "reference/other: per-name results ({name: record}) are needed", argument="reference")
    missing = [n for n in ref if n not in oth]
    if missing:
        raise ToolError("bad_argument", f"other: lacks the names {missing[:10]}", argument="other")
    header = columns or ["name", "reference", "other", "difference"]
    if len(header) != 4 or len(set(header)) != 4:
        raise ToolError("bad_argument", "columns: give four distinct names", argument="columns")
    if ddof < 0 or ddof >= len(ref):
        raise ToolError("bad_argument", f"ddof: must lie in [0, {len(ref) - 1}] for {len(ref)} names", argument="ddof")
    x = np.array([_dig(ref[n], feature, f"{reference}[{n!r}]", "feature") for n in ref])
    y = np.array([_dig(oth[n], feature_other or feature, f"{other}[{n!r}]", "feature_other") for n in ref])
    diff, mean = y - x, (x + y) / 2.0
    bias, sd = float(diff.mean()), float(diff.std(ddof=ddof))
    slope = float(np.polyfit(mean, diff, 1)[0]) if len(ref) > 1 and np.ptp(mean) > 0 else None
    per_name = {n: {"reference": float(a), "other": float(b), "difference": float(d), "mean": float(m)}
                for n, a, b, d, m in zip(ref, x, y, diff, mean)}
    summary = {"n": len(ref), "bias": bias, "sd": sd, "loa_lower": bias - limits_sd * sd, "loa_upper": bias + limits_sd * sd,
               "mean_reference": float(x.mean()), "mean_other": float(y.mean()), "proportional_slope": slope}
    frame = pd.DataFrame({header[0]: list(ref), header[1]: [_number(v) for v in x], header[2]: [_number(v) for v in y],
                          header[3]: [_number(round(v, 10)) for v in diff]})
    return {"summary": result("bland_altman", summary, feature=feature), "per_name": result("bland_altman_per_name", per_name),
            "table": New("labels", "lab", Table(frame, "discrepancies"))}


# ----------------------------------------------------------------------------- signals by stage


def epoch_of(hyp: Table, times: np.ndarray) -> np.ndarray:
    """Row position of the epoch holding each time (s from the recording start), -1 outside."""
    onsets = hyp.frame["onset_s"].astype(float).to_numpy()
    epoch_s = float(hyp.meta["epoch_s"])
    pos = np.searchsorted(onsets, times, side="right") - 1
    inside = (pos >= 0) & (times < onsets[np.clip(pos, 0, None)] + epoch_s)
    return np.where(inside, pos, -1)
