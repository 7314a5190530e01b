"""Reference for sa_pipeline_sleep_cycles: NREM-REM cycle analysis of one subject's night.

SRI coding (0 = wake, 1 = light, 2 = deep, 3 = REM; 30-s epochs). The pipeline: the sleep period
(first to last sleep epoch); REM periods (runs of REM epochs merged when fewer than 30 epochs =
15 min of other epochs separate them; a period spans its first to its last REM epoch); cycles
(cycle 1 starts at sleep onset, each cycle ends with the last epoch of a REM period, the next
starts right after it; epochs after the last REM period belong to no cycle); per-cycle
composition; a cycle table written as CSV.
"""
import csv
import os

import numpy as np
import pandas as pd

EPOCH_MIN = 0.5
MERGE_GAP_EPOCHS = 30  # REM episodes separated by fewer than 30 epochs (15 min) form one REM period
FILE_NAME = "sleep_cycles.csv"
COLUMNS = ["cycle", "start_epoch", "end_epoch", "duration_min", "deep_min", "rem_min"]


def _rem_periods(stages: np.ndarray) -> list[list[int]]:
    """[first, last] 0-based positions of each REM period."""
    periods: list[list[int]] = []
    for pos in np.flatnonzero(stages == 3):
        if periods and pos - periods[-1][1] - 1 < MERGE_GAP_EPOCHS:
            periods[-1][1] = int(pos)
        else:
            periods.append([int(pos), int(pos)])
    return periods


def _num(value: float):
    return int(value) if float(value).is_integer() else float(value)


def run(inputs: list[str], params: dict) -> dict:
    table = pd.read_csv(inputs[0])
    rows = table[table["subject"] == params["subject"]].sort_values("epoch")
    if rows.empty:
        raise ValueError(f"sa_pipeline_sleep_cycles: no rows for subject {params['subject']!r}")
    stages = rows[params["column"]].to_numpy().astype(int)
    epochs = rows["epoch"].to_numpy().astype(int)
    asleep = np.flatnonzero(stages != 0)
    onset, last = int(asleep[0]), int(asleep[-1])
    periods = _rem_periods(stages)
    if not periods:
        raise ValueError("sa_pipeline_sleep_cycles: the night has no REM period")
    cycles, start = [], onset
    for first, end in periods:
        chunk = stages[start:end + 1]
        cycles.append([int(epochs[start]), int(epochs[end]), _num(len(chunk) * EPOCH_MIN),
                       _num(int((chunk == 2).sum()) * EPOCH_MIN), _num(int((chunk == 3).sum()) * EPOCH_MIN)])
        start = end + 1
    deep_total = int((stages == 2).sum())
    first_start, first_end = onset, periods[0][1]
    deep_first = int((stages[first_start:first_end + 1] == 2).sum())

    os.makedirs("file_check", exist_ok=True)
    path = os.path.join("file_check", FILE_NAME)
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows([k] + row for k, row in enumerate(cycles, start=1))
    durations = [row[2] for row in cycles]
    return {
        "sleep_period_min": _num((last - onset + 1) * EPOCH_MIN),
        "first_rem_period_min": _num((periods[0][1] - periods[0][0] + 1) * EPOCH_MIN),
        "last_rem_period_min": _num((periods[-1][1] - periods[-1][0] + 1) * EPOCH_MIN),
        "mean_cycle_min": round(float(np.mean(durations)), 1),
        "cycle1_deep_share_pct": round(100.0 * deep_first / deep_total, 1) if deep_total else 0.0,
        "table_path": path,
        "table_properties": {
            "artifact_path": path,
            "row_count": len(cycles),
            "column_names": COLUMNS,
            "total_duration_sec": _num(sum(durations)),
        },
    }
