"""The report in the terminal: warnings first, long tables cut with a line saying so, detail
tables left out, model text printed as text (never as rich markup)."""
from rich.console import Console

from runner.report.model import Column, Report, ReportTable
from runner.report.terminal import TERMINAL_ROWS, print_report


def printed(report: Report) -> str:
    console = Console(record=True, width=200, color_system=None)
    print_report(report, console)
    return console.export_text()


def table(name: str, rows: int, detail: bool = False) -> ReportTable:
    return ReportTable(name=name, title=f"table {name}", section="S", detail=detail,
                       columns=[Column(key="case", title="case"), Column(key="score", title="score", kind="score")],
                       rows=[{"case": f"[bold]case-{i:03d}", "score": i / 3} for i in range(rows)])


def test_a_long_table_shows_its_first_rows_and_says_how_many_more():
    report = Report(title="r", runs=[], warnings=["instance set differs"])
    report.add(table("long", TERMINAL_ROWS + 15))
    report.add(table("short", 3))
    report.add(table("hidden", 5, detail=True))
    text = printed(report)
    assert text.index("warning: instance set differs") < text.index("table long")
    assert f"[bold]case-{TERMINAL_ROWS - 1:03d}" in text and f"case-{TERMINAL_ROWS:03d}" not in text
    assert f"… 15 more rows of {TERMINAL_ROWS + 15}: --html, --csv or --json show the whole table (long)" in text
    assert "case-002" in text and "0.7" in text  # the short table whole, scores formatted
    assert "table hidden" not in text
