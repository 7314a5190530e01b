"""Reference for sa_sleep_metrics: sleep efficiency and REM latency of one subject's hypnogram.

The SRI sample file codes stages 0 = wake, 1 = light (N1+N2), 2 = deep (N3), 3 = REM, one
row per 30-s epoch. TIB is the whole hypnogram, TST the non-wake epochs; REM latency runs
from the first non-wake epoch to the first REM epoch.
"""
import numpy as np
import pandas as pd

EPOCH_MIN = 0.5
WAKE, REM = 0, 3


def run(inputs: list[str], params: dict) -> dict:
    table = pd.read_csv(inputs[0])
    rows = table[table["subject"] == params["subject"]].sort_values("epoch")
    if rows.empty:
        raise ValueError(f"sa_sleep_metrics: no rows for subject {params['subject']!r}")
    stages = rows["reference"].to_numpy()
    if not set(np.unique(stages)) <= {0, 1, 2, 3}:
        raise ValueError(f"sa_sleep_metrics: unexpected stage codes {sorted(set(stages))}")
    sleep = np.flatnonzero(stages != WAKE)
    rem = np.flatnonzero(stages == REM)
    if len(sleep) == 0 or len(rem) == 0:
        raise ValueError(f"sa_sleep_metrics: {params['subject']} has no sleep or no REM")
    efficiency = 100.0 * len(sleep) / len(stages)
    return {
        "sleep_efficiency": round(efficiency, 2),
        "rem_latency_min": float((rem[0] - sleep[0]) * EPOCH_MIN),
    }
