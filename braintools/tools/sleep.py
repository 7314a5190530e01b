"""Sleep: hypnograms (load, crop, inspect, export), stage statistics, sleep metrics, awakenings,
transitions, agreement between scorers, automatic staging and slow-wave / spindle detection (YASA).

A hypnogram is a table of kind "hypnogram" in the labels branch, one row per scoring epoch:
`epoch` (the file's epoch number, else 1, 2, ...), `onset_s` (position x epoch_s), `stage` (the
label after the coding) and `code` (the value as stored), plus `group` when several recordings
(subjects) share one file. Stage roles (which labels are wake, REM) are always parameters.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pandas as pd

from braintools import paths, refs
from braintools.data import Table
from braintools.errors import ToolError
from braintools.registry import New, result, tool

Denominator = Literal["all", "sleep", "sleep_period"]


# ----------------------------------------------------------------------------- loading

@tool("sleep")
def load_hypnogram(stage_column: str, path: str | None = None, table: str | None = None,
                   coding: dict[str, str] | None = None, epoch_s: float = 30.0, epoch_column: str | None = None,
                   where_column: str | None = None, equals: str | None = None, group_column: str | None = None,
                   groups: list[str] | None = None, allow_empty: bool = False) -> dict[str, object]:
    """A hypnogram (one row per scoring epoch) from a CSV/TSV file or a table, with a stage coding.

    Rows are sorted by `epoch_column` when given (within each group); epoch i (0-based position)
    starts at i * epoch_s seconds.

    Parameters
    ----------
    stage_column : str
        The column holding the stage of each epoch.
    path : str, optional
        An input table file (give path or table).
    table : str, optional
        Id of a table already read (read_table).
    coding : dict of str to str, optional
        Stored value (as text) -> stage label, e.g. {"0": "W", "1": "N1"}; default: the values as text.
    epoch_s : float, optional
        Length of one scoring epoch in seconds.
    epoch_column : str, optional
        A column numbering the epochs (rows are ordered by it and it is kept as `epoch`).
    %(where_column)s
    equals : str, optional
        ... equals this value (compared as text), e.g. one subject.
    group_column : str, optional
        A column naming separate hypnograms in one file (e.g. subjects); kept as `group`.
    groups : list of str, optional
        Only these groups, in this order (with group_column).
    allow_empty : bool, optional
        Return an empty hypnogram instead of an error when no row is selected.
    """
    frame = _source_frame(path, table)
    for name in (stage_column, epoch_column, where_column, group_column):
        if name is not None and name not in frame.columns:
            raise ToolError("bad_argument", f"no column {name!r}; columns: {list(frame.columns)}", argument="stage_column")
    if epoch_s <= 0:
        raise ToolError("bad_argument", "epoch_s: must be positive", argument="epoch_s")
    if where_column is not None:
        frame = frame[frame[where_column].astype(str) == str(equals)]
    if group_column is not None and groups is not None:
        frame = frame[frame[group_column].astype(str).isin(groups)]
    if frame.empty and not allow_empty:
        raise ToolError("bad_argument", f"equals: no rows where {where_column} == {equals!r}", argument="equals")
    hyp = _build(frame, stage_column, coding, epoch_s, epoch_column, group_column, groups)
    hyp.meta.update({"selection": {where_column: equals} if where_column else {}, "stage_column": stage_column})
    return {"hypnogram": New("labels", "lab", hyp)}


def _source_frame(path: str | None, table: str | None) -> pd.DataFrame:
    if (path is None) == (table is None):
        raise ToolError("bad_argument", "path/table: give exactly one", argument="path")
    if table is not None:
        return refs.table(table).frame.copy()
    file = paths.input_path(str(path))
    return pd.read_csv(file, sep=None, engine="python", encoding="utf-8-sig")


def _build(frame: pd.DataFrame, stage_column: str, coding: dict[str, str] | None, epoch_s: float,
           epoch_column: str | None, group_column: str | None, groups: list[str] | None) -> Table:
    parts = []
    keys = [None] if group_column is None else (groups or list(dict.fromkeys(frame[group_column].astype(str))))
    for key in keys:
        rows = frame if key is None else frame[frame[group_column].astype(str) == key]
        rows = rows.sort_values(epoch_column, kind="stable") if epoch_column else rows
        codes = rows[stage_column].astype(str).tolist()
        part = pd.DataFrame({"epoch": rows[epoch_column].to_numpy() if epoch_column else np.arange(1, len(rows) + 1),
                             "onset_s": np.arange(len(rows)) * epoch_s, "stage": _decode(codes, coding), "code": codes})
        if key is not None:
            part.insert(0, "group", key)
        parts.append(part)
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["epoch", "onset_s", "stage", "code"])
    labels = list(dict.fromkeys(coding.values())) if coding else sorted(set(out["stage"]))
    meta: dict[str, Any] = {"epoch_s": epoch_s, "labels": labels, "n_epochs": len(out)}
    if group_column is not None:
        meta["groups"] = [str(k) for k in keys]
    return Table(out, "hypnogram", meta)


def _decode(codes: list[str], coding: dict[str, str] | None) -> list[str]:
    if coding is None:
        return codes
    alias = {_number_text(k): v for k, v in coding.items()}
    unknown = sorted({c for c in codes if c not in coding and _number_text(c) not in alias})
    if unknown:
        raise ToolError("bad_argument", f"coding: no label for stored values {unknown[:10]}", argument="coding")
    return [coding[c] if c in coding else alias[_number_text(c)] for c in codes]


def _number_text(text: str) -> str:
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number.is_integer() else str(number)


def hypnogram_table(entry_id: str, argument: str = "hypnogram") -> Table:
    """The hypnogram table `entry_id` names; ToolError wrong_kind naming `argument` for another table."""
    hyp = refs.table(entry_id, argument)
    if hyp.kind != "hypnogram":
        raise ToolError("wrong_kind", f"{argument}: {entry_id} is a {hyp.kind} table, not a hypnogram", argument=argument)
    return hyp


def per_group(hyp: Table, compute: Callable[[np.ndarray], dict[str, Any]]) -> dict[str, Any]:
    """compute(stages) for the hypnogram, or {group: compute(stages)} when it holds groups."""
    frame = hyp.frame
    if "group" not in frame.columns:
        return compute(frame["stage"].astype(str).to_numpy())
    return {g: compute(frame.loc[frame["group"] == g, "stage"].astype(str).to_numpy()) for g in hyp.meta.get("groups", [])}


# ----------------------------------------------------------------------------- requests and views

@tool("sleep")
def check_epoch_range(hypnogram: str, first_epoch: int, last_epoch: int) -> dict[str, object]:
    """Whether an epoch range (epoch numbers, both included) can be analysed: status ok or invalid_request, and why.

    Reasons, checked in this order: "unknown_<where_column>" when the hypnogram's selection is
    empty, "epoch_out_of_range" when first_epoch < 1, last_epoch > the last epoch or first > last.

    Parameters
    ----------
    hypnogram : str
        Id of a hypnogram (load_hypnogram, allow_empty for a selection that may not exist).
    first_epoch : int
        First epoch number of the range.
    last_epoch : int
        Last epoch number of the range.
    """
    hyp = hypnogram_table(hypnogram)
    reason = "none"
    if hyp.frame.empty:
        selected = list(hyp.meta.get("selection", {}))
        reason = f"unknown_{selected[0]}" if selected else "empty_hypnogram"
    elif first_epoch < 1 or last_epoch > int(hyp.frame["epoch"].max()) or first_epoch > last_epoch:
        reason = "epoch_out_of_range"
    status = "ok" if reason == "none" else "invalid_request"
    return {"check": result("request_check", {"status": status, "reason": reason, "first_epoch": first_epoch,
                                              "last_epoch": last_epoch})}


@tool("sleep")
def crop_hypnogram(hypnogram: str, first_epoch: int, last_epoch: int, strict: bool = True) -> dict[str, object]:
    """The epochs whose epoch number lies in [first_epoch, last_epoch] (both included), as a new hypnogram.

    Parameters
    ----------
    %(hypnogram)s
    first_epoch : int
        First epoch number kept.
    last_epoch : int
        Last epoch number kept.
    strict : bool, optional
        Refuse a range outside the hypnogram (False: keep whatever overlaps, possibly nothing).
    """
    hyp = hypnogram_table(hypnogram)
    epochs = hyp.frame["epoch"]
    if strict and (hyp.frame.empty or first_epoch > last_epoch or first_epoch < int(epochs.min())
                   or last_epoch > int(epochs.max())):
        span = f"{epochs.min()}-{epochs.max()}" if len(epochs) else "none"
        raise ToolError("out_of_range", f"first_epoch/last_epoch: {first_epoch}-{last_epoch} outside epochs {span}",
                        argument="last_epoch")
    frame = hyp.frame[(epochs >= first_epoch) & (epochs <= last_epoch)].reset_index(drop=True)
    meta = {**hyp.meta, "n_epochs": len(frame), "cropped": [first_epoch, last_epoch]}
    return {"hypnogram": New("labels", "lab", Table(frame, "hypnogram", meta))}


@tool("sleep")
def stage_at(hypnogram: str, epochs: list[int]) -> dict[str, object]:
    """The stage of given epochs, by epoch number: {epoch number: stage}.

    Parameters
    ----------
    %(hypnogram)s
    epochs : list of int
        Epoch numbers.
    """
    frame = hypnogram_table(hypnogram).frame
    lookup = dict(zip(frame["epoch"].astype(int), frame["stage"].astype(str)))
    missing = [e for e in epochs if e not in lookup]
    if missing:
        raise ToolError("out_of_range", f"epochs: no epoch numbered {missing[:10]}", argument="epochs")
    return {"stages": result("stages", {str(e): lookup[e] for e in epochs})}


# ----------------------------------------------------------------------------- statistics

def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, length) of each maximal run of True."""
    padded = np.concatenate([[False], np.asarray(mask, bool), [False]])
    edges = np.flatnonzero(np.diff(padded.astype(int)))
    return [(int(a), int(b - a)) for a, b in zip(edges[::2], edges[1::2])]


def _sleep_period(stages: np.ndarray, wake: list[str]) -> slice:
    """From the first to the last epoch not in `wake` (empty when there is no sleep)."""
    asleep = np.flatnonzero(~np.isin(stages, wake))
    return slice(int(asleep[0]), int(asleep[-1]) + 1) if len(asleep) else slice(0, 0)


@tool("sleep")
def stage_statistics(hypnogram: str, stages: list[str] | None = None, wake: list[str] | None = None,
                     denominator: Denominator = "all", groups: dict[str, list[str]] | None = None) -> dict[str, object]:
    """Per stage: epoch count, minutes, share (fraction and percent), bouts, longest and mean bout, first onset.

    Parameters
    ----------
    %(hypnogram)s
    stages : list of str, optional
        The stages reported, in this order (default: the coding's labels).
    wake : list of str, optional
        Labels that count as wake (needed for the "sleep" and "sleep_period" denominators).
    denominator : str, optional
        Shares of "all" epochs (time in bed), of "sleep" epochs (not wake: total sleep time), or of the "sleep_period" (first to last sleep epoch, which also limits the counts).
    groups : dict of str to list of str, optional
        Extra rows combining stages, e.g. {"NREM": ["N1", "N2", "N3"]}.
    """
    hyp = hypnogram_table(hypnogram)
    if denominator != "all" and not wake:
        raise ToolError("bad_argument", f"wake: the {denominator!r} denominator needs the wake labels", argument="wake")
    epoch_min = hyp.meta["epoch_s"] / 60.0
    names = {s: [s] for s in (stages or hyp.meta.get("labels", []))} | (groups or {})

    def compute(labels: np.ndarray) -> dict[str, Any]:
        if denominator == "sleep_period":
            labels = labels[_sleep_period(labels, wake or [])]
        total = len(labels) if denominator != "sleep" else int((~np.isin(labels, wake or [])).sum())
        return {name: _stage_record(labels, members, total, epoch_min, hyp.meta["epoch_s"]) for name, members in names.items()}

    return {"statistics": result("stage_statistics", per_group(hyp, compute), denominator=denominator,
                                 epoch_s=hyp.meta["epoch_s"])}


def _stage_record(labels: np.ndarray, members: list[str], total: int, epoch_min: float, epoch_s: float) -> dict[str, Any]:
    mask = np.isin(labels, members)
    bouts = [n for _, n in _runs(mask)]
    count = int(mask.sum())
    first = np.flatnonzero(mask)
    return {"count": count, "minutes": count * epoch_min, "fraction": count / total if total else None,
            "percent": 100.0 * count / total if total else None, "n_bouts": len(bouts),
            "longest_bout_min": max(bouts, default=0) * epoch_min,
            "mean_bout_min": float(np.mean(bouts)) * epoch_min if bouts else 0.0,
            "first_onset_s": float(first[0] * epoch_s) if len(first) else None}


@tool("sleep")
def sleep_metrics(hypnogram: str, wake: list[str], rem: list[str] | None = None,
                  rem_latency_from: Literal["sleep_onset", "record_start"] = "sleep_onset",
                  decimals: int | None = None) -> dict[str, object]:
    """Sleep summary: TIB, TST, SPT, SOL, WASO (minutes), sleep efficiency, maintenance efficiency, REM latency.

    TIB = all epochs; TST = epochs not in `wake`; SPT = first to last sleep epoch; SOL = epochs
    before the first sleep epoch; WASO = wake epochs inside the SPT; sleep_efficiency =
    100 * TST / TIB; maintenance_efficiency = 100 * TST / SPT; rem_latency_min = time from sleep
    onset (or from the record start) to the first REM epoch. Per group when the hypnogram has groups.

    Parameters
    ----------
    %(hypnogram)s
    %(wake)s
    rem : list of str, optional
        Labels that count as REM (for rem_latency_min).
    rem_latency_from : str, optional
        Measure REM latency from sleep onset or from the start of the record.
    decimals : int, optional
        Round every metric to this many decimals (before any later thresholding).
    """
    hyp = hypnogram_table(hypnogram)
    epoch_min = hyp.meta["epoch_s"] / 60.0

    def compute(labels: np.ndarray) -> dict[str, Any]:
        values = _metrics(labels, wake, rem, rem_latency_from, epoch_min)
        return {k: (round(v, decimals) if decimals is not None and isinstance(v, float) else v) for k, v in values.items()}

    return {"metrics": result("sleep_metrics", per_group(hyp, compute), epoch_s=hyp.meta["epoch_s"])}


def _metrics(labels: np.ndarray, wake: list[str], rem: list[str] | None, rem_from: str, epoch_min: float) -> dict[str, Any]:
    spt = _sleep_period(labels, wake)
    asleep = ~np.isin(labels, wake)
    n_sleep, n_spt = int(asleep.sum()), spt.stop - spt.start
    latency = None
    rem_at = np.flatnonzero(np.isin(labels, rem or []))
    if rem and len(rem_at) and n_sleep:
        latency = float((rem_at[0] - (spt.start if rem_from == "sleep_onset" else 0)) * epoch_min)
    return {"tib_min": len(labels) * epoch_min, "tst_min": n_sleep * epoch_min, "spt_min": n_spt * epoch_min,
            "sol_min": (spt.start if n_sleep else len(labels)) * epoch_min,
            "waso_min": int((~asleep[spt]).sum()) * epoch_min,
            "sleep_efficiency": 100.0 * n_sleep / len(labels) if len(labels) else None,
            "maintenance_efficiency": 100.0 * n_sleep / n_spt if n_spt else None,
            "rem_latency_min": latency, "n_epochs": len(labels)}


@tool("sleep")
def awakenings(hypnogram: str, wake: list[str], min_epochs: int = 1,
               within: Literal["sleep_period", "all"] = "sleep_period") -> dict[str, object]:
    """Wake bouts: how many last at least min_epochs, and the wake time of all bouts (WASO inside the sleep period).

    Parameters
    ----------
    %(hypnogram)s
    %(wake)s
    min_epochs : int, optional
        A wake bout counts as an awakening when it lasts at least this many epochs.
    within : str, optional
        Look inside the sleep period (first to last sleep epoch) or over the whole record.
    """
    hyp = hypnogram_table(hypnogram)
    if min_epochs < 1:
        raise ToolError("bad_argument", "min_epochs: must be at least 1", argument="min_epochs")
    epoch_min = hyp.meta["epoch_s"] / 60.0

    def compute(labels: np.ndarray) -> dict[str, Any]:
        span = labels[_sleep_period(labels, wake)] if within == "sleep_period" else labels
        bouts = [n for _, n in _runs(np.isin(span, wake))]
        return {"n_awakenings": sum(n >= min_epochs for n in bouts), "n_wake_bouts": len(bouts),
                "wake_min": sum(bouts) * epoch_min, "longest_wake_min": max(bouts, default=0) * epoch_min}

    return {"awakenings": result("awakenings", per_group(hyp, compute), min_epochs=min_epochs, within=within)}


def _onset_index(stages: np.ndarray, wake: list[str], onset_min_epochs: int) -> int | None:
    """Position of the first epoch of the first run of >= onset_min_epochs consecutive non-wake epochs."""
    for start, length in _runs(~np.isin(stages, wake)):
        if length >= onset_min_epochs:
            return start
    return None


def _check_onset(onset_min_epochs: int) -> None:
    if onset_min_epochs < 1:
        raise ToolError("bad_argument", "onset_min_epochs: must be at least 1", argument="onset_min_epochs")


@tool("sleep")
def stage_latency(hypnogram: str, wake: list[str], stages: list[str], onset_min_epochs: int = 1,
                  count: Literal["elapsed", "sleep"] = "elapsed") -> dict[str, object]:
    """Sleep onset and the latency from sleep onset to the first epoch of given stages (e.g. REM latency).

    Sleep onset is the first epoch of the first run of at least `onset_min_epochs` consecutive
    epochs not in `wake` (1: the first sleep epoch). sol_min = minutes from the hypnogram's first
    epoch to the start of the onset epoch. latency_min = minutes from the start of the onset epoch
    to the start of the first epoch in `stages` at or after it: all epochs in between ("elapsed")
    or only those not in `wake` ("sleep"). Epoch numbers are the hypnogram's. Values are None when
    there is no onset or no such stage. Per group when the hypnogram has groups.

    Parameters
    ----------
    %(hypnogram)s
    %(wake)s
    stages : list of str
        Labels whose first occurrence ends the latency (e.g. ["R"]).
    onset_min_epochs : int, optional
        Length of the run of sleep epochs that marks sleep onset (e.g. 20 for 10 min of persistent sleep at 30-s epochs).
    count : str, optional
        "elapsed": every epoch between onset and the stage; "sleep": only the sleep epochs (wake left out).
    """
    hyp = hypnogram_table(hypnogram)
    _check_onset(onset_min_epochs)
    if not stages:
        raise ToolError("bad_argument", "stages: give at least one label", argument="stages")
    epoch_min = hyp.meta["epoch_s"] / 60.0
    frame = hyp.frame

    def compute(labels: np.ndarray, numbers: np.ndarray) -> dict[str, Any]:
        onset = _onset_index(labels, wake, onset_min_epochs)
        out: dict[str, Any] = {"sleep_onset_epoch": None, "sol_min": None, "stage_epoch": None, "latency_min": None}
        if onset is None:
            return out
        out |= {"sleep_onset_epoch": int(numbers[onset]), "sol_min": onset * epoch_min}
        hits = np.flatnonzero(np.isin(labels[onset:], stages))
        if len(hits):
            between = labels[onset:onset + int(hits[0])]
            n = len(between) if count == "elapsed" else int((~np.isin(between, wake)).sum())
            out |= {"stage_epoch": int(numbers[onset + int(hits[0])]), "latency_min": n * epoch_min}
        return out

    if "group" not in frame.columns:
        value: dict[str, Any] = compute(frame["stage"].astype(str).to_numpy(), frame["epoch"].to_numpy())
    else:
        value = {g: compute(frame.loc[frame["group"] == g, "stage"].astype(str).to_numpy(),
                            frame.loc[frame["group"] == g, "epoch"].to_numpy()) for g in hyp.meta.get("groups", [])}
    return {"latency": result("stage_latency", value, stages=stages, onset_min_epochs=onset_min_epochs, count=count)}
