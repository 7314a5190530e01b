"""Measure a CSV/TSV table the model wrote: header, data rows, summed duration."""
from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any, Mapping

MAX_ROWS = 1_000_000


class TableFileError(ValueError):
    """The file is not a readable delimited table."""


class TableFile:
    """A table (CSV/TSV) the model wrote, measured field by field."""

    def __init__(self, path: Path, options: Mapping[str, Any] | None = None) -> None:
        self.path = path
        self.duration_column = (options or {}).get("duration_column", "duration_sec")
        self.header, self.rows = self._load()

    def _load(self) -> tuple[list[str], list[list[str]]]:
        delimiter = "\t" if self.path.suffix.lower() == ".tsv" else ","
        try:
            with open(self.path, newline="", encoding="utf-8-sig") as handle:  # -sig: a BOM is not part of a column name
                reader = csv.reader(handle, delimiter=delimiter)
                header = [name.strip() for name in next(reader, [])]
                rows = []
                for row in reader:
                    if any(cell.strip() for cell in row):
                        rows.append(row)
                    if len(rows) > MAX_ROWS:
                        raise TableFileError(f"more than {MAX_ROWS} rows")
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise TableFileError(f"cannot read {self.path.name} as a table: {exc}") from None
        if not header:
            raise TableFileError(f"{self.path.name} is empty")
        return header, rows

    def measure(self, name: str) -> Any:
        """One field's value; KeyError when the field is not measurable for a table."""
        if name == "row_count":
            return len(self.rows)
        if name == "column_names":
            return self.header
        if name == "total_duration_sec":
            return self._total_duration()
        raise KeyError(name)

    def _total_duration(self) -> float | None:
        if self.duration_column not in self.header:
            return None
        col = self.header.index(self.duration_column)
        try:
            values = [float(row[col]) for row in self.rows]
        except (ValueError, IndexError):
            return None
        total = math.fsum(values)
        return total if math.isfinite(total) else None
