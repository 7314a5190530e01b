"""What a report is, independent of how it is shown: sections of tables and figures.

The tables hold raw values (numbers, strings, None); the renderers (terminal, HTML, CSV,
JSON) only format them. An `estimate` cell is {"value", "low", "high"}: a mean with its 95%
interval; CSV and JSON exports flatten it into three columns.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from runner.report.rows import RunInfo

# How a column is formatted: text as is; score 0..100 with one decimal; share 0..1 as a
# percentage; estimate as "mean [low, high]"; p as a p-value; money in dollars; count as a
# mean number of things (tokens, calls) with one decimal.
ColumnKind = Literal["text", "int", "float", "count", "score", "share", "estimate", "p", "money", "seconds"]


class Column(BaseModel):
    """One column: its key in the rows, its header, its format."""

    key: str
    title: str
    kind: ColumnKind = "text"


class ReportTable(BaseModel):
    """One table of a report; `name` is its file stem in exports (leaderboard.csv)."""

    name: str
    title: str
    section: str
    columns: list[Column]
    rows: list[dict[str, Any]] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # printed under the table
    detail: bool = False  # a long table: exported and in the HTML, not printed in the terminal

    def column(self, key: str) -> Column:
        """The column with this key (KeyError names the table and key)."""
        for column in self.columns:
            if column.key == key:
                return column
        raise KeyError(f"table {self.name} has no column {key!r}")


class Figure(BaseModel):
    """One figure: SVG text made by matplotlib, with what it shows."""

    name: str
    title: str
    section: str
    svg: str
    caption: str = ""


class Report(BaseModel):
    """Everything `eegbench report` shows, in section order."""

    title: str
    runs: list[RunInfo]
    sections: list[str] = Field(default_factory=list)  # in display order
    tables: list[ReportTable] = Field(default_factory=list)
    figures: list[Figure] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)  # comparability and data problems, shown first
    settings: dict[str, Any] = Field(default_factory=dict)  # seed, resamples, intersect, prices file

    def table(self, name: str) -> ReportTable | None:
        """The table with this name, if the report has it."""
        return next((t for t in self.tables if t.name == name), None)

    def add(self, item: ReportTable | Figure) -> None:
        """Append a table or figure, opening its section if new."""
        if item.section not in self.sections:
            self.sections.append(item.section)
        if isinstance(item, ReportTable):
            self.tables.append(item)
        else:
            self.figures.append(item)
