"""Accuracy, macro-F1 and Cohen's kappa over label sequences (EEGAgentBench §6.2).

`predicted` may hold None (or any value outside the label set) for an unparseable answer: it
is simply never equal to a reference label, so it counts as wrong for accuracy and as a false
negative of the reference class for macro-F1, and is never dropped.
"""
from __future__ import annotations

from collections import Counter
from typing import Hashable, Sequence


def accuracy(reference: Sequence[Hashable], predicted: Sequence[Hashable]) -> float:
    """Share of positions where the prediction equals the reference (0 when empty)."""
    _same_length(reference, predicted)
    if not reference:
        return 0.0
    return sum(r == p for r, p in zip(reference, predicted)) / len(reference)


def per_class_f1(reference: Sequence[Hashable], predicted: Sequence[Hashable],
                 labels: Sequence[Hashable]) -> dict[Hashable, float]:
    """F1_c = 2TP/(2TP+FP+FN) per label; a label with no TP, FP or FN (absent from both) gets 0,
    like a label that is never predicted."""
    _same_length(reference, predicted)
    scores = {}
    for label in labels:
        tp = sum(r == label and p == label for r, p in zip(reference, predicted))
        fp = sum(r != label and p == label for r, p in zip(reference, predicted))
        fn = sum(r == label and p != label for r, p in zip(reference, predicted))
        denominator = 2 * tp + fp + fn
        scores[label] = 2 * tp / denominator if denominator else 0.0
    return scores


def macro_f1(reference: Sequence[Hashable], predicted: Sequence[Hashable],
             labels: Sequence[Hashable]) -> float:
    """Unweighted mean of per-class F1 over the task's label set (never over what was predicted)."""
    if not labels:
        raise ValueError("macro_f1 needs a non-empty label set")
    scores = per_class_f1(reference, predicted, labels)
    return sum(scores.values()) / len(labels)


def cohen_kappa(reference: Sequence[Hashable], predicted: Sequence[Hashable],
                labels: Sequence[Hashable]) -> float:
    """kappa = (p_o - p_e) / (1 - p_e), p_e from the marginals over `labels`.

    Degenerate rule (§6.2): when p_e = 1 (one class fills both sequences) a perfect match
    scores 1 and anything else 0. Predictions outside `labels` count as disagreement."""
    _same_length(reference, predicted)
    n = len(reference)
    if n == 0:
        return 0.0
    p_o = sum(r == p for r, p in zip(reference, predicted)) / n
    ref_counts, pred_counts = Counter(reference), Counter(predicted)
    p_e = sum(ref_counts[c] * pred_counts[c] for c in labels) / (n * n)
    if p_e >= 1.0:
        return 1.0 if p_o == 1.0 else 0.0
    return (p_o - p_e) / (1.0 - p_e)


def _same_length(reference: Sequence[Hashable], predicted: Sequence[Hashable]) -> None:
    if len(reference) != len(predicted):
        raise ValueError(f"{len(reference)} reference labels but {len(predicted)} predictions")
