"""Hypnograms compared and exported: stage transitions, agreement between two hypnograms, criteria on a result, and the hypnogram written to a file."""
from __future__ import annotations

import csv
import hashlib
from typing import Any, Literal

import numpy as np
import pandas as pd

from braintools import paths, refs
from braintools.data import Artifact
from braintools.errors import ToolError
from braintools.registry import New, result, tool
from braintools.tools.sleep import hypnogram_table, per_group


@tool("sleep")
def stage_transitions(hypnogram: str, wake: list[str] | None = None) -> dict[str, object]:
    """Stage changes between consecutive epochs: their number, the transition counts, and sleep-to-wake transitions per hour of sleep.

    Parameters
    ----------
    %(hypnogram)s
    wake : list of str, optional
        Labels that count as wake (for the sleep-to-wake counts).
    """
    hyp = hypnogram_table(hypnogram)
    epoch_h = hyp.meta["epoch_s"] / 3600.0

    def compute(labels: np.ndarray) -> dict[str, Any]:
        before, after = labels[:-1], labels[1:]
        matrix = pd.crosstab(pd.Series(before, name="from"), pd.Series(after, name="to")) if len(before) else pd.DataFrame()
        out: dict[str, Any] = {"n_stage_shifts": int((before != after).sum()),
                               "counts": {str(a): {str(b): int(v) for b, v in row.items()} for a, row in matrix.iterrows()}}
        if wake:
            to_wake = int((~np.isin(before, wake) & np.isin(after, wake)).sum())
            sleep_h = float((~np.isin(labels, wake)).sum() * epoch_h)
            out |= {"n_sleep_to_wake": to_wake, "sleep_to_wake_per_hour": to_wake / sleep_h if sleep_h else None}
        return out

    return {"transitions": result("stage_transitions", per_group(hyp, compute))}


@tool("sleep")
def hypnogram_agreement(reference: str, other: str, labels: list[str] | None = None) -> dict[str, object]:
    """Epoch-by-epoch agreement of two hypnograms: accuracy (percent), Cohen's kappa and the confusion matrix.

    Parameters
    ----------
    %(reference)s
    other : str
        Id of the hypnogram compared (columns), with as many epochs.
    labels : list of str, optional
        The label set of the kappa and the matrix (default: every label present).
    """
    a = hypnogram_table(reference, "reference").frame["stage"].astype(str).to_numpy()
    b = hypnogram_table(other, "other").frame["stage"].astype(str).to_numpy()
    if len(a) != len(b) or not len(a):
        raise ToolError("bad_argument", f"other: {len(b)} epochs against {len(a)} in the reference", argument="other")
    names = labels or sorted(set(a) | set(b))
    index = {n: i for i, n in enumerate(names)}
    keep = np.array([x in index and y in index for x, y in zip(a, b)])
    matrix = np.zeros((len(names), len(names)), int)
    np.add.at(matrix, ([index[x] for x in a[keep]], [index[y] for y in b[keep]]), 1)
    n = matrix.sum()
    observed = np.trace(matrix) / n
    expected = float((matrix.sum(axis=1) @ matrix.sum(axis=0)) / n ** 2)
    kappa = (observed - expected) / (1 - expected) if expected < 1 else None
    confusion = {r: {c: int(matrix[i, j]) for j, c in enumerate(names)} for i, r in enumerate(names)}
    return {"agreement": result("agreement", {"accuracy_pct": 100.0 * float(np.mean(a == b)), "kappa": kappa,
                                              "n_epochs": len(a), "confusion": confusion}, labels=names)}


@tool("sleep")
def check_criteria(result_id: str, minimum: dict[str, float] | None = None, maximum: dict[str, float] | None = None,
                   label: str = "criteria") -> dict[str, object]:
    """Whether a result's values meet thresholds: value >= minimum and value <= maximum (both inclusive).

    Parameters
    ----------
    result_id : str
        Id of a result whose value maps names to numbers (e.g. sleep_metrics).
    minimum : dict of str to float, optional
        Name -> smallest acceptable value.
    maximum : dict of str to float, optional
        Name -> largest acceptable value.
    label : str, optional
        What meeting all criteria means, used in the summary text.
    """
    value = refs.result_value(result_id, "result_id")
    checks: dict[str, Any] = {}
    for bounds, op in ((minimum or {}, ">="), (maximum or {}, "<=")):
        for name, limit in bounds.items():
            if not isinstance(value, dict) or not isinstance(value.get(name), (int, float)):
                raise ToolError("bad_argument", f"{'minimum' if op == '>=' else 'maximum'}: {name!r} is not a number in {result_id}",
                                argument="minimum" if op == ">=" else "maximum")
            met = value[name] >= limit if op == ">=" else value[name] <= limit
            checks[name] = {"value": value[name], "operation": op, "limit": limit, "met": bool(met)}
    if not checks:
        raise ToolError("bad_argument", "minimum/maximum: give at least one criterion", argument="minimum")
    all_met = all(c["met"] for c in checks.values())
    parts = [f"{n} {c['value']:g} {c['operation']} {c['limit']:g}: {'met' if c['met'] else 'not met'}" for n, c in checks.items()]
    text = f"{label}: {'yes' if all_met else 'no'} ({'; '.join(parts)})"
    return {"criteria": result("criteria", {"all_met": all_met, "checks": checks, "summary": text})}


# ----------------------------------------------------------------------------- export

@tool("sleep")
def export_hypnogram(hypnogram: str, path: str, layout: Literal["runs", "epochs"] = "runs",
                     columns: list[str] | None = None, stage_names: dict[str, str] | None = None) -> dict[str, object]:
    """Write a hypnogram as CSV under /workspace/file_check: one row per run of a stage (onset, duration, stage) or per epoch.

    Onsets and durations are whole seconds (int) when epoch_s is whole, from the first epoch's start.

    Parameters
    ----------
    %(hypnogram)s
    path : str
        The output file, e.g. "file_check/hypnogram.csv".
    layout : str, optional
        "runs": maximal runs of one stage; "epochs": one row per epoch.
    columns : list of str, optional
        The three column names for onset, duration and stage (default onset_s, duration_s, stage).
    stage_names : dict of str to str, optional
        Label -> name written (default: the labels).
    """
    hyp = hypnogram_table(hypnogram)
    header = columns or ["onset_s", "duration_s", "stage"]
    if len(header) != 3:
        raise ToolError("bad_argument", "columns: give three names (onset, duration, stage)", argument="columns")
    rows = _export_rows(hyp.frame["stage"].astype(str).to_numpy(), hyp.meta["epoch_s"], layout, stage_names or {})
    file = paths.output_path(path)
    with open(file, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    data = file.read_bytes()
    shown = f"file_check/{file.relative_to(paths.output_root().resolve())}"
    firsts: dict[str, Any] = {}
    for onset, _, name in rows:
        firsts.setdefault(str(name), onset)
    artifact = Artifact(shown, "csv", len(data), hashlib.sha256(data).hexdigest())
    return {"artifact": New("artifacts", "art", artifact),
            "summary": result("export", {"path": shown, "n_rows": len(rows), "columns": header,
                                         "total_duration_s": sum(r[1] for r in rows), "first_onset_s": firsts})}


def _export_rows(labels: np.ndarray, epoch_s: float, layout: str, names: dict[str, str]) -> list[list[Any]]:
    def sec(x: float) -> float | int:
        return int(x) if float(x).is_integer() else float(x)

    if layout == "epochs":
        return [[sec(i * epoch_s), sec(epoch_s), names.get(s, s)] for i, s in enumerate(labels)]
    edges = np.flatnonzero(labels[1:] != labels[:-1]) + 1 if len(labels) else np.array([], int)
    starts = np.concatenate([[0], edges]).astype(int) if len(labels) else np.array([], int)
    stops = np.concatenate([edges, [len(labels)]]).astype(int) if len(labels) else np.array([], int)
    return [[sec(a * epoch_s), sec((b - a) * epoch_s), names.get(labels[a], labels[a])] for a, b in zip(starts, stops)]


# ----------------------------------------------------------------------------- signals (YASA)
