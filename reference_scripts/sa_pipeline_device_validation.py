"""Reference for sa_pipeline_device_validation: a consumer sleep tracker validated against PSG on several nights.

SRI coding (0 = wake, 1 = light, 2 = deep, 3 = REM; 30-s epochs), one night per subject. The
pipeline, in the order of a validation study (Menghini et al. 2021 describe the framework):
one sleep measure per night from each scoring; Bland-Altman discrepancy (mean reference, bias =
mean of device - PSG, 95% limits of agreement = bias -/+ 1.96 sample SD); epoch-by-epoch
agreement pooled over the nights (the device's sensitivity for one stage, Cohen's kappa over
the four codes); kappa per night and the night that agrees worst; the nights ranked by the
absolute discrepancy; a per-night table written as CSV.
"""
import csv
import os

import numpy as np
import pandas as pd

EPOCH_MIN = 0.5
CODES = 4
COLUMNS = ["subject", "psg", "device", "difference"]
FILE_NAME = "device_vs_psg.csv"


def _measure(stages: np.ndarray, name: str) -> float:
    """One night's study measure: tst_min, waso_min, sleep_efficiency, light_min, deep_min or rem_min."""
    asleep = np.flatnonzero(stages != 0)
    if name == "tst_min":
        return len(asleep) * EPOCH_MIN
    if name == "sleep_efficiency":
        return 100.0 * len(asleep) / len(stages)
    if name == "waso_min":
        return int((stages[asleep[0]:asleep[-1] + 1] == 0).sum()) * EPOCH_MIN
    code = {"light_min": 1, "deep_min": 2, "rem_min": 3}[name]
    return int((stages == code).sum()) * EPOCH_MIN


def _kappa(a: np.ndarray, b: np.ndarray) -> float:
    confusion = np.zeros((CODES, CODES))
    np.add.at(confusion, (a, b), 1)
    n = confusion.sum()
    observed = np.trace(confusion) / n
    expected = float(confusion.sum(axis=1) @ confusion.sum(axis=0)) / n**2
    return float((observed - expected) / (1.0 - expected))


def _plain(value: float):
    return int(value) if float(value).is_integer() else float(value)


def run(inputs: list[str], params: dict) -> dict:
    table = pd.read_csv(inputs[0])
    subjects, measure, code = params["subjects"], params["measure"], int(params["stage_code"])
    psg, dev, diffs, kappas, pooled_ref, pooled_dev = [], [], [], {}, [], []
    for subject in subjects:
        rows = table[table["subject"] == subject].sort_values("epoch")
        if rows.empty:
            raise ValueError(f"sa_pipeline_device_validation: no rows for subject {subject!r}")
        ref, other = rows["reference"].to_numpy().astype(int), rows["device"].to_numpy().astype(int)
        psg.append(_measure(ref, measure))
        dev.append(_measure(other, measure))
        diffs.append(dev[-1] - psg[-1])
        kappas[subject] = _kappa(ref, other)
        pooled_ref.append(ref)
        pooled_dev.append(other)
    ref_all, dev_all = np.concatenate(pooled_ref), np.concatenate(pooled_dev)
    d = np.array(diffs)
    bias, sd = float(d.mean()), float(d.std(ddof=1))
    order = sorted(range(len(subjects)), key=lambda i: (-abs(diffs[i]), i))
    worst = min(subjects, key=lambda s: kappas[s])

    os.makedirs("file_check", exist_ok=True)
    path = os.path.join("file_check", FILE_NAME)
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for subject, a, b, diff in zip(subjects, psg, dev, diffs):
            writer.writerow([subject, _plain(a), _plain(b), _plain(round(diff, 10))])
    in_stage = ref_all == code
    return {
        "mean_reference": round(float(np.mean(psg)), 2),
        "bias": round(bias, 2),
        "loa_lower": round(bias - 1.96 * sd, 2),
        "loa_upper": round(bias + 1.96 * sd, 2),
        "sensitivity_pct": round(100.0 * float(np.mean(dev_all[in_stage] == code)), 2),
        "kappa": round(_kappa(ref_all, dev_all), 4),
        "worst_subject": worst,
        "discrepancy_ranking": [subjects[i] for i in order],
        "table_path": path,
        "table_properties": {
            "artifact_path": path,
            "row_count": len(subjects),
            "column_names": COLUMNS,
            "total_duration_sec": round(float(d.sum()), 6),
        },
    }
