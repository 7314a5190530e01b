"""Reference for sa_efficiency_set: which of the listed subjects sleep efficiently enough.

Sleep efficiency = 100 x non-wake epochs / all epochs of the subject's hypnogram in the
chosen column (SRI coding, 0 = wake); a subject qualifies when it is strictly above the
threshold.
"""
import pandas as pd


def run(inputs: list[str], params: dict) -> dict:
    table = pd.read_csv(inputs[0])
    chosen = []
    for subject in params["subjects"]:
        stages = table.loc[table["subject"] == subject, params["column"]].to_numpy()
        if len(stages) == 0:
            raise ValueError(f"sa_efficiency_set: no rows for subject {subject!r}")
        efficiency = 100.0 * (stages != 0).sum() / len(stages)
        if efficiency > params["threshold"]:
            chosen.append(subject)
    return {"subjects_above": sorted(chosen)}
