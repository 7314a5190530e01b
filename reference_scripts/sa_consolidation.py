"""Reference for sa_consolidation: is one subject's sleep consolidated by stated thresholds?

SRI coding 0 = wake per 30-s epoch. Sleep efficiency over the whole hypnogram, WASO = wake
epochs between the first and last non-wake epoch; sleep counts as consolidated when
efficiency >= the efficiency threshold and WASO <= the WASO threshold.
"""
import numpy as np
import pandas as pd

EPOCH_MIN = 0.5
WAKE = 0


def _conclusion(subject, column, efficiency, waso, params, consolidated) -> str:
    source = "polysomnography" if column == "reference" else "the consumer device"
    se_ok = "meets" if efficiency >= params["min_efficiency"] else "falls below"
    waso_ok = "within" if waso <= params["max_waso_min"] else "above"
    verdict = "consolidated" if consolidated else "not consolidated"
    return (
        f"According to {source}, {subject}'s sleep is {verdict}: sleep efficiency "
        f"{efficiency:.2f}% {se_ok} the {params['min_efficiency']}% threshold and WASO of "
        f"{waso:g} min is {waso_ok} the {params['max_waso_min']}-min limit."
    )


def run(inputs: list[str], params: dict) -> dict:
    table = pd.read_csv(inputs[0])
    subject, column = params["subject"], params["column"]
    rows = table[table["subject"] == subject].sort_values("epoch")
    if rows.empty:
        raise ValueError(f"sa_consolidation: no rows for subject {subject!r}")
    stages = rows[column].to_numpy()
    sleep = np.flatnonzero(stages != WAKE)
    if len(sleep) == 0:
        raise ValueError(f"sa_consolidation: {subject} never sleeps")
    efficiency = round(float(100.0 * len(sleep) / len(stages)), 2)
    period = stages[sleep[0]: sleep[-1] + 1]
    waso = float(np.count_nonzero(period == WAKE) * EPOCH_MIN)
    consolidated = efficiency >= params["min_efficiency"] and waso <= params["max_waso_min"]
    return {
        "sleep_efficiency": efficiency,
        "waso_min": waso,
        "consolidated": "yes" if consolidated else "no",
        "conclusion": _conclusion(subject, column, efficiency, waso, params, consolidated),
    }
