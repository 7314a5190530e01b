"""Reference for sa_fragmentation: stage shifts, sleep fragmentation index, longest REM bout.

The SRI sample codes 0 = wake, 1 = light, 2 = deep, 3 = REM per 30-s epoch (reference
column). Shifts count every change of code between consecutive epochs of the whole
hypnogram; the fragmentation index is sleep-to-wake transitions per hour of sleep.
"""
import numpy as np
import pandas as pd

EPOCH_MIN = 0.5
WAKE, REM = 0, 3


def _longest_run(flags: np.ndarray) -> int:
    best = length = 0
    for flag in flags:
        length = length + 1 if flag else 0
        best = max(best, length)
    return best


def run(inputs: list[str], params: dict) -> dict:
    table = pd.read_csv(inputs[0])
    rows = table[table["subject"] == params["subject"]].sort_values("epoch")
    if rows.empty:
        raise ValueError(f"sa_fragmentation: no rows for subject {params['subject']!r}")
    stages = rows["reference"].to_numpy()
    tst_hours = np.count_nonzero(stages != WAKE) * EPOCH_MIN / 60.0
    if tst_hours == 0:
        raise ValueError(f"sa_fragmentation: {params['subject']} has no sleep")
    before, after = stages[:-1], stages[1:]
    shifts = int(np.count_nonzero(before != after))
    to_wake = int(np.count_nonzero((before != WAKE) & (after == WAKE)))
    return {
        "stage_shifts": shifts,
        "fragmentation_index": round(float(to_wake / tst_hours), 2),
        "longest_rem_min": float(_longest_run(stages == REM) * EPOCH_MIN),
    }
