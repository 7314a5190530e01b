"""Reference for sa_stage_ranking: the four stages ordered by time spent in them.

SRI coding 0 = wake, 1 = light, 2 = deep, 3 = REM; ties (never met in the chosen bindings)
would keep the order wake, light, deep, rem.
"""
import numpy as np
import pandas as pd

NAMES = ("wake", "light", "deep", "rem")


def run(inputs: list[str], params: dict) -> dict:
    table = pd.read_csv(inputs[0])
    rows = table[table["subject"] == params["subject"]].sort_values("epoch")
    if rows.empty:
        raise ValueError(f"sa_stage_ranking: no rows for subject {params['subject']!r}")
    counts = np.bincount(rows[params["column"]].to_numpy(), minlength=4)
    order = sorted(range(4), key=lambda code: (-counts[code], code))
    return {"ranking": [NAMES[code] for code in order]}
