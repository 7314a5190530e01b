"""Reference for sa_device_agreement: epoch-by-epoch agreement of device and PSG hypnograms.

Accuracy is the share of epochs where the two codes match; Cohen's kappa is the unweighted
kappa over the fixed label set 0-3 (the same as sklearn.metrics.cohen_kappa_score with
labels=[0, 1, 2, 3]), computed here with numpy to keep the script dependency-free.
"""
import numpy as np
import pandas as pd

LABELS = 4


def _kappa(a: np.ndarray, b: np.ndarray) -> float:
    confusion = np.zeros((LABELS, LABELS))
    np.add.at(confusion, (a, b), 1)
    n = confusion.sum()
    observed = np.trace(confusion) / n
    expected = float(confusion.sum(axis=1) @ confusion.sum(axis=0)) / n**2
    return (observed - expected) / (1.0 - expected)


def run(inputs: list[str], params: dict) -> dict:
    table = pd.read_csv(inputs[0])
    rows = table[table["subject"] == params["subject"]].sort_values("epoch")
    if rows.empty:
        raise ValueError(f"sa_device_agreement: no rows for subject {params['subject']!r}")
    ref = rows["reference"].to_numpy()
    dev = rows["device"].to_numpy()
    return {
        "accuracy_pct": round(100.0 * float(np.mean(ref == dev)), 2),
        "kappa": round(float(_kappa(ref, dev)), 4),
    }
