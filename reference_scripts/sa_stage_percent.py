"""Reference for sa_stage_percent: share of total sleep time in light, deep and REM sleep.

The SRI sample codes 0 = wake, 1 = light (N1+N2), 2 = deep (N3), 3 = REM per 30-s epoch;
percentages are of the non-wake epochs of the chosen column (reference or device).
"""
import numpy as np
import pandas as pd


def run(inputs: list[str], params: dict) -> dict:
    table = pd.read_csv(inputs[0])
    rows = table[table["subject"] == params["subject"]].sort_values("epoch")
    if rows.empty:
        raise ValueError(f"sa_stage_percent: no rows for subject {params['subject']!r}")
    stages = rows[params["column"]].to_numpy()
    counts = np.bincount(stages, minlength=4)
    tst = counts[1:].sum()
    if tst == 0:
        raise ValueError(f"sa_stage_percent: {params['subject']} has no sleep")
    return {
        "light_pct": round(float(100.0 * counts[1] / tst), 2),
        "deep_pct": round(float(100.0 * counts[2] / tst), 2),
        "rem_pct": round(float(100.0 * counts[3] / tst), 2),
    }
