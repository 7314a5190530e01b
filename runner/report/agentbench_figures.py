"""The report's EEGAgentBench figures: T2's confusion matrix, T5's alarms, T6's hypnograms."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from matplotlib.axes import Axes

from runner.report.figure_style import (
    HYPNOGRAM_AXIS,
    PAGE_WIDTH,
    PALETTE,
    as_number,
    finish,
    new_figure,
    report_style,
    run_colors,
    section_of,
    wrap_label,
)
from runner.report.model import Figure, Report
from runner.report.rows import RunData
from validation.agentbench.answers import EPOCH_S, expand_hypnogram
from validation.agentbench.units import HYPNOGRAM_CHECK

# --- EEGAgentBench --------------------------------------------------------------------------

def t2_confusion(report: Report, runs: list[RunData]) -> Figure | None:
    """T2 artifact labels: a reference × predicted count matrix per run."""
    table = report.table("t2_confusion")
    if table is None or not table.rows:
        return None
    by_run: dict[str, dict[tuple[str, str], int]] = {}
    titles: dict[str, str] = {}
    for row in table.rows:
        run = str(row.get("run"))
        titles.setdefault(run, str(row.get("label") or run))
        cell = (_class(row.get("true")), _class(row.get("predicted")))
        cells = by_run.setdefault(run, {})
        cells[cell] = cells.get(cell, 0) + int(row.get("count") or 0)
    truth = list(dict.fromkeys(t for cells in by_run.values() for t, _ in cells))
    predicted = truth + [p for p in dict.fromkeys(p for cells in by_run.values() for _, p in cells) if p not in truth]
    ncols = min(3, len(by_run))
    nrows = math.ceil(len(by_run) / ncols)
    with report_style():
        fig = new_figure(min(PAGE_WIDTH, 0.6 + 2.5 * ncols), 0.5 + 2.5 * nrows)
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for index, (run, cells) in enumerate(by_run.items()):
            _confusion(axes[index // ncols][index % ncols], cells, truth, predicted, titles[run])
        for index in range(len(by_run), nrows * ncols):
            axes[index // ncols][index % ncols].set_visible(False)
        return finish(fig, "t2_confusion", "T2 artifact identification: confusion matrices",
                       section_of(report, "t2_confusion", "EEGAgentBench"),
                       "Counts of epochs by reference label (rows) and the label the answer read as (columns); "
                       "the diagonal is correct.")


def _class(value: Any) -> str:
    return "unparsed" if value is None or value == "" else str(value)


def _confusion(ax: Axes, cells: dict[tuple[str, str], int], truth: list[str], predicted: list[str],
               title: str) -> None:
    matrix = [[cells.get((t, p), 0) for p in predicted] for t in truth]
    top = max([1, *(v for row in matrix for v in row)])
    ax.imshow(matrix, cmap="Blues", vmin=0, vmax=top)
    for y, row in enumerate(matrix):
        for x, value in enumerate(row):
            ax.text(x, y, str(value), ha="center", va="center", fontsize=8,
                    color="white" if value > 0.6 * top else "black")
    ax.set_xticks(range(len(predicted)), predicted, rotation=30, ha="right")
    ax.set_yticks(range(len(truth)), truth)
    ax.set_xlabel("predicted")
    ax.set_ylabel("reference")
    ax.set_title(wrap_label(title, 28))
    for spine in ax.spines.values():
        spine.set_visible(False)


def t5_alarms(report: Report, runs: list[RunData]) -> Figure | None:
    """T5 seizure detection: miss rate against over-alarm rate per configuration."""
    table = report.table("t5_alarms")
    if table is None:
        return None
    points = [(str(r.get("label")), over, miss) for r in table.rows
              if (miss := as_number(r.get("miss_rate"))) is not None
              and (over := as_number(r.get("over_alarm_rate"))) is not None]
    if not points:
        return None
    colors = run_colors(runs)
    with report_style():
        fig = new_figure(4.6, 3.6)
        ax = fig.add_subplot()
        for index, (label, over, miss) in enumerate(points):
            ax.scatter([100 * over], [100 * miss], s=36, color=colors.get(label, PALETTE[index % len(PALETTE)]),
                       zorder=3)
            ax.annotate(label, (100 * over, 100 * miss), xytext=(5, 4), textcoords="offset points", fontsize=7.5)
        ax.set_xlim(-4, 104)
        ax.set_ylim(-4, 104)
        ax.set_xlabel("over-alarm rate (% of seizure-free records)")
        ax.set_ylabel("miss rate (% of seizure records)")
        ax.set_title("T5 seizure detection: misses against over-alarms")
        ax.grid(alpha=0.3)
        return finish(fig, "t5_alarms", "T5 seizure detection: miss rate against over-alarm rate",
                       section_of(report, "t5_alarms", "EEGAgentBench"),
                       "Lower left is better: few seizure records missed and few seizure-free records alarmed.")


def hypnograms(report: Report, runs: list[RunData], recordings: Sequence[str] | None = None) -> Figure | None:
    """T6 sleep staging: the reference hypnogram against each configuration's prediction for
    up to three recordings (by default the first run's worst, median and best by kappa)."""
    found = _hypnogram_units(runs)
    if not found:
        return None
    chosen = list(recordings or _choose_recordings(found, runs))[:3]
    panels = [(case, run, found[(run.run_id, case)]) for case in chosen for run in runs
              if (run.run_id, case) in found]
    if not panels:
        return None
    colors = run_colors(runs)
    with report_style():
        fig = new_figure(PAGE_WIDTH, 0.5 + 1.35 * len(panels))
        axes = fig.subplots(len(panels), 1, squeeze=False)
        for ax_row, (case, run, unit) in zip(axes, panels):
            _hypnogram(ax_row[0], unit, f"{case} · {run.info.label}", colors.get(run.info.label, PALETTE[0]))
        axes[-1][0].set_xlabel("time (hours)")
        return finish(fig, "t6_hypnograms", "T6 sleep staging: reference against prediction",
                       section_of(report, "t2_confusion", "EEGAgentBench"),
                       "Grey: the reference hypnogram; colour: the prediction after the scorer's tolerant expansion "
                       "(gaps and unreadable rows count as wake). kappa is the unit's score.")


def _hypnogram_units(runs: Sequence[RunData]) -> dict[tuple[str, str], tuple[list[str], list[str], float | None]]:
    """(run, case) -> (reference, prediction, kappa) for epoch-1 rows with a T6 unit."""
    found: dict[tuple[str, str], tuple[list[str], list[str], float | None]] = {}
    for run in runs:
        for row in run.rows:
            unit = next((u for u in row.units if u.type == HYPNOGRAM_CHECK.name), None)
            if unit is None or row.epoch != 1:
                continue
            n_epochs = _epochs(unit.expected)
            if n_epochs:
                found[(run.run_id, row.case_id)] = (expand_hypnogram(unit.expected, n_epochs),
                                                     expand_hypnogram(unit.predicted, n_epochs), unit.score)
    return found


def _epochs(expected: Any) -> int:
    """The reference's length in epochs: its last run-length row ends there."""
    if not isinstance(expected, list):
        return 0
    ends = [row[1] for row in expected if isinstance(row, list) and len(row) == 3 and isinstance(row[1], int)]
    return max(ends) + 1 if ends else 0


def _choose_recordings(found: dict[tuple[str, str], tuple[list[str], list[str], float | None]],
                       runs: Sequence[RunData]) -> list[str]:
    first = next(run.run_id for run in runs if any(key[0] == run.run_id for key in found))
    ranked = sorted((v[2] if v[2] is not None else -1.0, case) for (run, case), v in found.items() if run == first)
    picks = [ranked[0], ranked[len(ranked) // 2], ranked[-1]]
    return list(dict.fromkeys(case for _, case in picks))


def _hypnogram(ax: Axes, unit: tuple[list[str], list[str], float | None], title: str, color: str) -> None:
    reference, prediction, kappa = unit
    level = {stage: i for i, stage in enumerate(HYPNOGRAM_AXIS)}
    hours = [i * EPOCH_S / 3600 for i in range(len(reference) + 1)]
    for labels, shade, width, name in ((reference, "0.55", 2.6, "reference"), (prediction, color, 1.0, "prediction")):
        ys = [level[s] for s in labels]
        ax.step(hours, [*ys, ys[-1]], where="post", color=shade, linewidth=width, label=name)
    ax.set_yticks(range(len(HYPNOGRAM_AXIS)), HYPNOGRAM_AXIS)
    ax.set_ylim(-0.5, len(HYPNOGRAM_AXIS) - 0.5)
    ax.set_xlim(0, hours[-1])
    shown = f"kappa {kappa:.2f}" if kappa is not None else "not scored"
    ax.set_title(f"{title} · {shown}", loc="left")
    ax.legend(loc="lower right", ncols=2, frameon=False, fontsize=7)
