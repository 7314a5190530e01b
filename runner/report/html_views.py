"""The HTML report's views (what its template renders) and their formatting: cells, anchors,
and the cut sizes that keep a page of two 467-instance runs a file a browser opens."""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from runner.report.context import slug
from runner.report.format import MISSING
from runner.report.format import format_cell as shared_format
from runner.run.records import entry_key

# Cut sizes (characters): enough to follow what happened, small enough that two runs of 467
# instances with 20 turns each stay a file of tens of megabytes.
MAX_REPLY = 6000
MAX_CODE = 8000
MAX_OBSERVATION = 3000
MAX_TOOL_TEXT = 3000
MAX_REPORT = 20000
MAX_INSTRUCTION = 10000
MAX_VALUE = 600  # a parsed or expected value shown in the unit table
MAX_IMAGE_BYTES = 200_000  # one embedded image
IMAGE_BUDGET = 40_000_000  # all embedded images of one page together

# --- formatting -----------------------------------------------------------------------------

def format_cell(value: Any, kind: str) -> str:
    """A table value as shown, written as the terminal writes it (runner.report.format), made
    safe for what a table may hold that the terminal never sees: NaN and infinities, and an
    estimate without an interval (too few clusters to resample) show as "–" or the mean alone."""
    if kind == "estimate" and isinstance(value, dict):
        return _estimate(value)
    if isinstance(value, float) and not math.isfinite(value):
        return MISSING
    return shared_format(value, kind)


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def as_text(value: Any) -> str:
    """A value as shown: JSON for containers, else its text."""
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _estimate(value: dict[str, Any]) -> str:
    mid, low, high = (_finite(value.get(k)) for k in ("value", "low", "high"))
    if mid is None:
        return MISSING
    if low is None or high is None:
        return shared_format(mid, "score")
    return shared_format({"value": mid, "low": low, "high": high}, "estimate")


def sort_value(value: Any, kind: str) -> str | None:
    """The cell's data-v for the sorting script: the number, "" for missing, None for text."""
    if kind == "text":
        return None
    if kind == "estimate" and isinstance(value, dict):
        value = value.get("value")
    number = _finite(value)
    return "" if number is None else repr(number)


def cut(text: str, limit: int) -> str:
    """`text`, or its head and tail around a note of how much was left out."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return (f"{text[:head]}\n\n[… {len(text) - limit:,} characters cut here; the full text is in the run "
            f"directory …]\n\n{text[-tail:]}")


# --- anchors --------------------------------------------------------------------------------

def _tag(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def instance_anchor(run_id: str, case_id: str, epoch: int = 1) -> str:
    """The element id of one instance run in the browser: readable slugs, made unique by a
    hash of the exact names (two keys may slug alike)."""
    key = entry_key(case_id, epoch)
    return f"i-{slug(run_id)}-{slug(key)}-{_tag(run_id + chr(0) + key)}"


def run_anchor(run_id: str) -> str:
    """The element id of a run's provenance card."""
    return f"run-{slug(run_id)}-{_tag(run_id)}"


# --- views ----------------------------------------------------------------------------------

@dataclass
class Cell:
    """One formatted table cell."""

    text: str
    numeric: bool = False
    sort: str | None = None
    href: str | None = None


@dataclass
class TableView:
    """A table ready to print: headers, formatted rows, notes."""

    name: str
    title: str
    headers: list[tuple[str, bool]]  # (title, numeric)
    rows: list[list[Cell]]
    notes: list[str]
    collapsed: bool


@dataclass
class FigureView:
    """A figure: inline SVG when it passed the check, else an <img> data URI."""

    name: str
    title: str
    caption: str
    svg: Markup | None
    image: str | None


@dataclass
class SectionView:
    """One section's anchor, tables and figures."""

    title: str
    anchor: str
    tables: list[TableView] = field(default_factory=list)
    figures: list[FigureView] = field(default_factory=list)


@dataclass
class RunCard:
    """A run's provenance."""

    anchor: str
    title: str
    facts: list[tuple[str, str]]
    groups: list[tuple[str, list[tuple[str, str]]]]  # controls, resources, model settings, libraries


@dataclass
class TurnView:
    """One turn: reply, code, observation, tool calls."""

    title: str
    reply: str
    code: str | None
    observation: str | None
    observation_title: str
    tool_calls: list[dict[str, str]]
    note: str | None


@dataclass
class UnitView:
    """One validation unit's verdict, as the unit table of an instance shows it."""

    metric: str
    type: str
    weight: str
    predicted: str
    expected: str
    score: str
    detail: str
    params: str
    evidence: str


@dataclass
class ArtifactView:
    """A retained file: an embedded image (data URI) or a listed file."""

    path: str
    size: str
    sha256: str
    note: str
    image: str | None = None


@dataclass
class InstanceView:
    """Everything the browser shows of one instance run."""

    anchor: str
    summary: str
    status: str
    facts: list[tuple[str, str]]
    instruction: str | None = None
    turns: list[TurnView] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    report: str = ""
    units: list[UnitView] = field(default_factory=list)
    artifacts: list[ArtifactView] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # records that could not be read


@dataclass
class RunBrowser:
    """One run's instance runs."""

    anchor: str
    title: str
    instances: list[InstanceView]


@dataclass
class ImageBudget:
    """What is left of the page's allowance for embedded images."""

    left: int = IMAGE_BUDGET
