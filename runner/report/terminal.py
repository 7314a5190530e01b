"""The report in the terminal: rich tables, section by section. Detail tables are left to the
exports, and a long table shows its first rows with a line saying how many more there are."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from runner.report.format import format_cell, is_numeric
from runner.report.model import Report, ReportTable

TERMINAL_ROWS = 30  # rows of one table printed; --html, --csv and --json hold them all


def print_report(report: Report, console: Console) -> None:
    """Warnings first, then every non-detail table with its notes."""
    console.print(Text(report.title, style="bold"))
    for warning in report.warnings:
        console.print(Text("warning: " + warning, style="yellow"))
    for section in report.sections:
        tables = [t for t in report.tables if t.section == section and not t.detail and t.rows]
        if not tables:
            continue
        console.rule(section)
        for table in tables:
            console.print(rich_table(table, TERMINAL_ROWS))
            if len(table.rows) > TERMINAL_ROWS:
                console.print(Text(f"… {len(table.rows) - TERMINAL_ROWS} more rows of {len(table.rows)}: "
                                   f"--html, --csv or --json show the whole table ({table.name})", style="dim"))
            for note in table.notes:
                console.print(Text(note, style="dim"))
    console.print(Text(_settings(report), style="dim"))


def rich_table(table: ReportTable, max_rows: int | None = None) -> Table:
    """One ReportTable as a rich Table, its first `max_rows` rows (every value as plain text:
    nothing is markup)."""
    out = Table(title=table.title, title_justify="left")
    for column in table.columns:
        out.add_column(column.title, justify="right" if is_numeric(column.kind) else "left", overflow="fold")
    for row in table.rows[:max_rows]:
        out.add_row(*(Text(format_cell(row.get(c.key), c.kind)) for c in table.columns))
    return out


def _settings(report: Report) -> str:
    return "settings: " + ", ".join(f"{k} {v}" for k, v in report.settings.items() if v is not None)
