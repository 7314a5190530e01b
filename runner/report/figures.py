"""The report's figures: matplotlib drawings rendered to deterministic SVG.

Each public function takes (report, runs) and returns a Figure, or None when the data it
draws is absent (no scored rows, no such table, no T6 instance...). `all_figures` returns
the available ones in display order. The SVG is made with the Agg backend's SVG writer and
fixed hash salt, text kept as text and no date, so the same data gives the same bytes (a
report can be diffed and cached); sizes fit an A4 page (7.5 in wide).

What they draw (the paper figures they follow in brackets): the score distribution per
subset and configuration [BrainBench Fig. 8], the mean by difficulty [Table 2 / Fig. 9],
the validation-unit paradigm gap [Fig. 4], the mean pairwise absolute difference per task
[Fig. 5], score against target-model tokens with the Pareto front [Fig. 15], and for
EEGAgentBench the T2 confusion matrices, the T5 miss/over-alarm trade-off and T6 hypnograms.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.patches import Patch

from runner.report.agentbench_figures import hypnograms, t2_confusion, t5_alarms
from runner.report.context import ReportContext, paradigm_rank, scored
from runner.report.figure_style import (
    LEVELS,
    PAGE_WIDTH,
    PALETTE,
    as_number,
    finish,
    legend_below,
    mean_or_none,
    new_figure,
    report_style,
    run_colors,
    section_of,
    wrap_label,
)
from runner.report.model import Figure, Report
from runner.report.rows import InstanceRow, RunData

# --- score distribution (BrainBench Fig. 8) -------------------------------------------------

def score_distribution(report: Report, runs: list[RunData]) -> Figure | None:
    """Box plots of instance scores per subset, one box per configuration."""
    ctx = ReportContext(runs)
    configs = [c.label for c in ctx.configurations()]
    subsets = ctx.subsets()
    data: dict[tuple[str, str], list[float]] = {(row.subset, row.label): [] for row in ctx.rows}
    for row in scored(ctx.rows):
        data[(row.subset, row.label)].append(float(row.score or 0.0))
    if not any(data.values()):
        return None
    colors = run_colors(runs)
    with report_style():
        fig = new_figure(PAGE_WIDTH, 3.6)
        ax = fig.add_subplot()
        width = 0.8 / len(configs)
        for i, subset in enumerate(subsets):
            for j, label in enumerate(configs):
                values = data.get((subset, label))
                if values:
                    _box(ax, values, i - 0.4 + width * (j + 0.5), width * 0.85, colors[label])
        ax.set_xticks(range(len(subsets)), [wrap_label(s) for s in subsets])
        ax.set_xlim(-0.6, len(subsets) - 0.4)
        ax.set_ylim(-4, 104)
        ax.set_ylabel("instance score (0-100)")
        ax.set_title("Score distribution per subset")
        ax.grid(axis="y", alpha=0.3)
        legend_below(fig, [Patch(facecolor=colors[c], alpha=0.6) for c in configs], configs)
        return finish(fig, "score_distribution", "Score distribution per subset and configuration",
                       section_of(report, "leaderboard", "Leaderboard"),
                       "Each box spans the quartiles of the scored instance runs (infra_error excluded), "
                       "the line is the median, the diamond the mean, whiskers reach 1.5 IQR.")


def _box(ax: Axes, values: list[float], position: float, width: float, color: str) -> None:
    parts = ax.boxplot([values], positions=[position], widths=width, patch_artist=True, showmeans=True,
                       manage_ticks=False, flierprops={"markersize": 2.5, "markeredgecolor": color},
                       meanprops={"marker": "D", "markersize": 3.5, "markerfacecolor": "white",
                                  "markeredgecolor": "black"},
                       medianprops={"color": "black"})
    for box in parts["boxes"]:
        box.set_facecolor(color)
        box.set_alpha(0.6)


# --- mean by difficulty (Table 2 / Fig. 9) --------------------------------------------------

def difficulty_lines(report: Report, runs: list[RunData]) -> Figure | None:
    """Mean score per difficulty level, one line per configuration, one panel per subset."""
    means = _difficulty_means(report, runs)
    if not means:
        return None
    subsets = list(dict.fromkeys(subset for subset, _, _ in means))
    labels = list(dict.fromkeys(label for _, label, _ in means))
    levels = [lv for lv in LEVELS if any(k[2] == lv for k in means)]
    levels += sorted({k[2] for k in means} - set(levels))
    colors = {**{label: PALETTE[i % len(PALETTE)] for i, label in enumerate(labels)}, **run_colors(runs)}
    ncols = min(3, len(subsets))
    nrows = math.ceil(len(subsets) / ncols)
    with report_style():
        fig = new_figure(PAGE_WIDTH, 0.6 + 2.3 * nrows)
        axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
        for index, subset in enumerate(subsets):
            ax = axes[index // ncols][index % ncols]
            for label in labels:
                points = [(x, means[(subset, label, lv)]) for x, lv in enumerate(levels) if (subset, label, lv) in means]
                if points:
                    ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", color=colors[label])
            ax.set_xticks(range(len(levels)), levels)
            ax.set_xlim(-0.3, len(levels) - 0.7)
            ax.set_ylim(0, 100)
            ax.set_title(wrap_label(subset, 30))
            ax.grid(axis="y", alpha=0.3)
            if index % ncols == 0:
                ax.set_ylabel("mean score")
        for index in range(len(subsets), nrows * ncols):
            axes[index // ncols][index % ncols].set_visible(False)
        handles = [ax.plot([], [], marker="o", color=colors[label])[0] for label in labels]
        legend_below(fig, handles, labels)
        return finish(fig, "difficulty", "Mean score by difficulty level",
                       section_of(report, "difficulty", "Difficulty"),
                       "Mean score of the scored instance runs at each difficulty level, per subset.")


def _difficulty_means(report: Report, runs: list[RunData]) -> dict[tuple[str, str, str], float]:
    """(subset, configuration, level) -> mean: the difficulty table when the report has it,
    else the rows (so the figure agrees with the table it sits beside)."""
    table = report.table("difficulty")
    means: dict[tuple[str, str, str], float] = {}
    if table is not None:
        for row in table.rows:
            value = as_number(row.get("mean"))
            if value is not None and row.get("difficulty"):
                means[(str(row.get("subset")), f"{row.get('model')} · {row.get('paradigm')}",
                       str(row["difficulty"]))] = value
        return means
    groups: dict[tuple[str, str, str], list[float]] = {}
    for instance in scored(r for run in runs for r in run.rows):
        if instance.difficulty:
            groups.setdefault((instance.subset, instance.label, instance.difficulty), []).append(
                float(instance.score or 0.0))
    return {key: sum(values) / len(values) for key, values in groups.items()}


# --- validation-unit families (Fig. 4) ------------------------------------------------------

def unit_heatmap(report: Report, runs: list[RunData]) -> Figure | None:
    """The paradigm gap B − A per model and unit family (annotated); with one paradigm per
    model, the family means per configuration instead."""
    table = report.table("units")
    if table is None:
        return None
    means: dict[tuple[str, str], dict[str, float]] = {}
    for row in table.rows:
        value = as_number(row.get("mean"))
        if value is not None:
            means.setdefault((str(row.get("model")), str(row.get("paradigm"))), {})[str(row.get("family"))] = value
    if not means:
        return None
    families = list(dict.fromkeys(f for by_family in means.values() for f in by_family))
    gaps = _paradigm_gaps(means, families)
    with report_style():
        if gaps:
            return _heatmap(report, gaps, families, diverging=True)
        rows = {f"{model} · {paradigm}": [by_family.get(f) for f in families]
                for (model, paradigm), by_family in means.items()}
        return _heatmap(report, rows, families, diverging=False)


def _paradigm_gaps(means: dict[tuple[str, str], dict[str, float]],
                   families: list[str]) -> dict[str, list[float | None]]:
    """For each model with several paradigms, B − A per family, A earlier in registry order."""
    gaps: dict[str, list[float | None]] = {}
    models = list(dict.fromkeys(model for model, _ in means))
    for model in models:
        paradigms = sorted((p for m, p in means if m == model), key=paradigm_rank)
        for i, a in enumerate(paradigms):
            for b in paradigms[i + 1:]:
                row_a, row_b = means[(model, a)], means[(model, b)]
                gaps[f"{model}: {b} − {a}"] = [row_b[f] - row_a[f] if f in row_a and f in row_b else None
                                               for f in families]
    return gaps


def _heatmap(report: Report, rows: dict[str, list[float | None]], families: list[str], diverging: bool) -> Figure:
    values = [[math.nan if v is None else v for v in row] for row in rows.values()]
    finite = [abs(v) for row in values for v in row if not math.isnan(v)]
    if diverging:
        span = max([*finite, 1.0])
        cmap, vmin, vmax = "RdBu", -span, span
    else:
        cmap, vmin, vmax = "viridis", 0.0, 100.0
    fig = new_figure(min(PAGE_WIDTH, 2.8 + 0.85 * len(families)), 1.3 + 0.42 * len(rows))
    ax = fig.add_subplot()
    image = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(families)), families, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), [wrap_label(label, 32) for label in rows])
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    for y, row in enumerate(values):
        for x, value in enumerate(row):
            _annotate(ax, x, y, value, (value - vmin) / (vmax - vmin), diverging)
    bar = fig.colorbar(image, ax=ax, shrink=0.9)
    bar.set_label("score difference (points)" if diverging else "mean unit score (0-100)")
    if diverging:
        title = "Paradigm gap per validation-unit family (B − A)"
        caption = ("Mean unit score of paradigm B minus paradigm A for the same model, per unit family; blue: B "
                   "is better, red: A is better, blank: a family one of them lacks.")
    else:
        title = "Validation-unit families at a glance"
        caption = "Mean unit score (0-100) of every configuration per validation-unit family, as in the table above."
    ax.set_title(title)
    return finish(fig, "unit_families", title, section_of(report, "units", "Validation units"), caption)


def _annotate(ax: Axes, x: int, y: int, value: float, shade: float, diverging: bool) -> None:
    if math.isnan(value):
        ax.text(x, y, "–", ha="center", va="center", color="0.4")
        return
    dark = abs(shade - 0.5) > 0.3 if diverging else shade < 0.55
    text = f"{value:+.1f}" if diverging else f"{value:.1f}"
    ax.text(x, y, text, ha="center", va="center", fontsize=7.5, color="white" if dark else "black")


# --- stability (Fig. 5) ---------------------------------------------------------------------

def mpad_dots(report: Report, runs: list[RunData]) -> Figure | None:
    """Mean pairwise absolute difference between a task's instance scores, per configuration."""
    table = report.table("stability")
    if table is None:
        return None
    points = [(str(r.get("subset")), str(r.get("task")), f"{r.get('model')} · {r.get('paradigm')}", value)
              for r in table.rows if (value := as_number(r.get("mpad"))) is not None]
    if not points:
        return None
    subsets = list(dict.fromkeys(p[0] for p in points))
    tasks = [(s, t) for s in subsets for t in sorted({p[1] for p in points if p[0] == s})]
    labels = list(dict.fromkeys(p[2] for p in points))
    colors = {**{label: PALETTE[i % len(PALETTE)] for i, label in enumerate(labels)}, **run_colors(runs)}
    # task rows from the top, in subset order
    y_of = {task: len(tasks) - 1 - i for i, task in enumerate(tasks)}
    offset = {label: (j - (len(labels) - 1) / 2) * min(0.22, 0.6 / len(labels)) for j, label in enumerate(labels)}
    with report_style():
        fig = new_figure(PAGE_WIDTH, 1.4 + 0.2 * len(tasks))
        ax = fig.add_subplot()
        for label in labels:
            mine = [p for p in points if p[2] == label]
            ax.scatter([p[3] for p in mine], [y_of[(p[0], p[1])] + offset[label] for p in mine],
                       s=16, color=colors[label], label=label, zorder=3)
        ax.set_yticks([y_of[t] for t in tasks], [t[1] for t in tasks])
        ax.set_ylim(-0.7, len(tasks) - 0.3)
        ax.grid(axis="both", alpha=0.25)
        _subset_bands(ax, tasks, y_of)
        ax.set_xlabel("MPAD (0-1, scores normalised; lower is more stable)")
        ax.set_title("Score stability across a task's instances (MPAD)")
        handles, names = ax.get_legend_handles_labels()
        legend_below(fig, handles, names)
        return finish(fig, "mpad", "Mean pairwise absolute difference per task",
                       section_of(report, "stability", "Stability"),
                       "MPAD: the mean absolute difference between the scores (normalised to 0-1) of every pair of "
                       "instances of one task; 0 means every instance of the task scored the same. Tasks are grouped "
                       "by subset.")


def _subset_bands(ax: Axes, tasks: list[tuple[str, str]], y_of: dict[tuple[str, str], int]) -> None:
    """A rule between subsets and the subset's name at the right edge of its band."""
    subsets = list(dict.fromkeys(s for s, _ in tasks))
    for subset in subsets:
        ys = [y_of[t] for t in tasks if t[0] == subset]
        ax.axhline(min(ys) - 0.5, color="0.6", linewidth=0.6)
        ax.text(1.0, (min(ys) + max(ys)) / 2, " " + wrap_label(subset, 14), transform=ax.get_yaxis_transform(),
                ha="left", va="center", fontsize=7.5, color="0.3")


# --- cost against score (Fig. 15) -----------------------------------------------------------

def tokens_pareto(report: Report, runs: list[RunData]) -> Figure | None:
    """Mean score against the target model's mean tokens per instance run, with the Pareto
    front (no other configuration scores more for fewer tokens)."""
    ctx = ReportContext(runs)
    points: list[tuple[str, float, float]] = []
    for config in ctx.configurations():
        rows = scored(ctx.config_rows(config))
        tokens = [float(_target_tokens(r)) for r in rows]
        score, used = mean_or_none([float(r.score or 0.0) for r in rows]), mean_or_none(tokens)
        if score is not None and used is not None and used > 0:
            points.append((config.label, used, score))
    if not points:
        return None
    front = pareto_front([(p[1], p[2]) for p in points])
    colors = run_colors(runs)
    with report_style():
        fig = new_figure(PAGE_WIDTH, 3.6)
        ax = fig.add_subplot()
        xs = [p[1] for p in points]
        if max(xs) / min(xs) > 20:
            ax.set_xscale("log")
        ax.step([x for x, _ in front], [y for _, y in front], where="post", color="0.5", linestyle="--",
                linewidth=1, label="Pareto front", zorder=1)
        for label, x, y in points:
            on_front = (x, y) in front
            ax.scatter([x], [y], s=48 if on_front else 30, color=colors.get(label, PALETTE[0]),
                       edgecolors="black" if on_front else "none", zorder=3, label=label)
        ax.set_ylim(0, 100)
        ax.set_xlabel("mean target-model tokens per instance run (prompt + completion)")
        ax.set_ylabel("mean score")
        ax.set_title("Score against tokens")
        ax.grid(alpha=0.3)
        handles, names = ax.get_legend_handles_labels()
        legend_below(fig, handles, names)
        return finish(fig, "tokens_pareto", "Score against target-model tokens",
                       section_of(report, "cost", "Cost"),
                       "Each point is one configuration: its mean score over scored instance runs against the "
                       "evaluated model's mean prompt + completion tokens. Outlined points are on the Pareto front.")


def _target_tokens(row: InstanceRow) -> int:
    cost = row.roles.get("target")
    return cost.prompt_tokens + cost.completion_tokens if cost is not None else 0


def pareto_front(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The (cost, score) points no other point beats (lower or equal cost and higher score),
    by increasing cost."""
    front: list[tuple[float, float]] = []
    for cost, value in sorted(points, key=lambda p: (p[0], -p[1])):
        if not front or value > front[-1][1]:
            front.append((cost, value))
    return front


# --- all ------------------------------------------------------------------------------------

FIGURES = (score_distribution, difficulty_lines, unit_heatmap, mpad_dots, tokens_pareto, t2_confusion, t5_alarms,
           hypnograms)


def all_figures(report: Report, runs: list[RunData]) -> list[Figure]:
    """Every figure the report's data allows, in display order."""
    made = (draw(report, runs) for draw in FIGURES)
    return [figure for figure in made if figure is not None]
