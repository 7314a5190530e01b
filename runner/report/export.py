"""CSV and JSON of every table of a report (estimates flattened into value, low, high)."""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from runner.core.fileio import write_atomic
from runner.report.model import Report, ReportTable


def flat_columns(table: ReportTable) -> list[str]:
    """Column keys, an estimate column becoming key, key_low, key_high."""
    keys = []
    for column in table.columns:
        keys += [column.key, f"{column.key}_low", f"{column.key}_high"] if column.kind == "estimate" else [column.key]
    return keys


def flat_row(table: ReportTable, row: dict[str, Any]) -> dict[str, Any]:
    """One row with estimates flattened."""
    flat: dict[str, Any] = {}
    for column in table.columns:
        value = row.get(column.key)
        if column.kind != "estimate":
            flat[column.key] = value
            continue
        value = value or {}
        flat[column.key], flat[f"{column.key}_low"], flat[f"{column.key}_high"] = (
            value.get("value"), value.get("low"), value.get("high"))
    return flat


def write_csv(report: Report, directory: Path) -> list[Path]:
    """One <table>.csv per table; returns the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for table in report.tables:
        path = directory / f"{table.name}.csv"
        with open(path, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=flat_columns(table))
            writer.writeheader()
            for row in table.rows:
                writer.writerow(flat_row(table, row))
        written.append(path)
    return written


def report_json(report: Report) -> dict[str, Any]:
    """The report as plain JSON: runs, warnings, settings and every table (figures left out)."""
    return {
        "title": report.title,
        "settings": report.settings,
        "warnings": report.warnings,
        "runs": [info.model_dump(mode="json") for info in report.runs],
        "tables": {t.name: {"title": t.title, "section": t.section, "columns": flat_columns(t), "notes": t.notes,
                            "rows": [flat_row(t, row) for row in t.rows]} for t in report.tables},
    }


def write_json_report(report: Report, path: Path) -> None:
    """The report's JSON, written atomically."""
    write_atomic(path, json.dumps(report_json(report), indent=1, ensure_ascii=False, default=str) + "\n")
