"""What every report figure shares: its size and palette, matplotlib's style for it, and the
conversion to the plain SVG the page inlines."""
from __future__ import annotations

import io
import math
import re
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import matplotlib
from matplotlib.figure import Figure as MplFigure

from runner.report.context import ReportContext
from runner.report.model import Figure, Report
from runner.report.rows import RunData

# No display here, and the SVG must not depend on one (figures are drawn on their own
# canvases, never through pyplot, so this only pins what a stray pyplot call would get).
matplotlib.use("Agg")

PAGE_WIDTH = 7.5  # inches: A4 less margins
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
LEVELS = ("easy", "medium", "hard")
# Hypnograms are drawn with wake on top and REM between wake and light sleep, as clinicians read them.
HYPNOGRAM_AXIS = ("N3", "N2", "N1", "REM", "W")
STYLE: dict[Any, Any] = {  # rcParams (matplotlib types its keys as literals)
    "font.size": 8.5, "axes.titlesize": 9.5, "axes.labelsize": 8.5, "legend.fontsize": 8,
    "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.spines.top": False, "axes.spines.right": False,
    "font.family": "DejaVu Sans", "svg.fonttype": "none",
}
_PROLOG = re.compile(r"\A.*?(?=<svg[\s>])", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)


# --- rendering ------------------------------------------------------------------------------

@contextmanager
def report_style() -> Iterator[None]:
    """The report's look, without touching the process-wide rcParams of a caller."""
    with matplotlib.rc_context(STYLE):
        yield


def new_figure(width: float, height: float) -> MplFigure:
    """A figure of `width` x `height` inches with constrained layout."""
    return MplFigure(figsize=(width, height), layout="constrained")


def to_svg(fig: MplFigure, name: str) -> str:
    """The figure as an inline-ready <svg> element: no XML prolog, DOCTYPE nor RDF metadata
    (they name external addresses and mean nothing inside HTML); byte-identical across runs."""
    buffer = io.StringIO()
    # the salt seeds the ids of clip paths and markers: per figure, so figures inlined in one
    # page never share an id for different content
    rc: dict[Any, Any] = {**STYLE, "svg.hashsalt": f"eegbench-{name}"}
    with matplotlib.rc_context(rc):
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = _PROLOG.sub("", buffer.getvalue(), count=1)
    return _METADATA.sub("", text, count=1).strip()


def finish(fig: MplFigure, name: str, title: str, section: str, caption: str) -> Figure:
    """The report's Figure: its name, title, section, caption and its SVG."""
    return Figure(name=name, title=title, section=section, svg=to_svg(fig, name), caption=caption)


def section_of(report: Report, table: str, default: str) -> str:
    """Figures sit in the section of the table they illustrate."""
    found = report.table(table)
    return found.section if found is not None else default


def run_colors(runs: Sequence[RunData]) -> dict[str, str]:
    """One color per configuration (model · paradigm), the same in every figure."""
    configs = ReportContext(list(runs)).configurations()
    return {c.label: PALETTE[i % len(PALETTE)] for i, c in enumerate(configs)}


def wrap_label(text: str, width: int = 16) -> str:
    """A label folded onto lines of at most `width` characters."""
    return textwrap.fill(text, width=width, break_long_words=True)


def as_number(value: Any) -> float | None:
    """A finite float, or None (tables hold None for missing values)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def mean_or_none(values: Sequence[float]) -> float | None:
    """The mean of `values`, None when there are none."""
    return math.fsum(values) / len(values) if values else None


def legend_below(fig: MplFigure, handles: list[Any], labels: list[str]) -> None:
    """The legend under the axes, in up to three columns."""
    fig.legend(handles, labels, loc="outside lower center", ncols=min(3, max(1, len(labels))), frameon=False)
