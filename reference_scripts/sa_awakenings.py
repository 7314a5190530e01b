"""Reference for sa_awakenings: awakenings and WASO within the sleep period of one hypnogram.

The SRI sample codes 0 = wake, 1 = light, 2 = deep, 3 = REM per 30-s epoch. The sleep
period runs from the first to the last non-wake epoch; an awakening is a maximal run of
wake epochs inside it lasting at least `min_epochs` epochs.
"""
import numpy as np
import pandas as pd

EPOCH_MIN = 0.5
WAKE = 0


def _stages(path: str, subject: str, column: str) -> np.ndarray:
    table = pd.read_csv(path)
    rows = table[table["subject"] == subject].sort_values("epoch")
    if rows.empty:
        raise ValueError(f"sa_awakenings: no rows for subject {subject!r}")
    return rows[column].to_numpy()


def _wake_runs(wake: np.ndarray) -> list[int]:
    """Lengths of maximal runs of True in a boolean array."""
    runs, length = [], 0
    for flag in wake:
        if flag:
            length += 1
        elif length:
            runs.append(length)
            length = 0
    if length:
        runs.append(length)
    return runs


def run(inputs: list[str], params: dict) -> dict:
    stages = _stages(inputs[0], params["subject"], params["column"])
    sleep = np.flatnonzero(stages != WAKE)
    if len(sleep) == 0:
        raise ValueError(f"sa_awakenings: {params['subject']} never sleeps")
    period = stages[sleep[0]: sleep[-1] + 1]
    runs = _wake_runs(period == WAKE)
    return {
        "n_awakenings": int(sum(1 for r in runs if r >= params["min_epochs"])),
        "waso_min": float(sum(runs) * EPOCH_MIN),
    }
