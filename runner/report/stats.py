"""Statistics for reports: cluster bootstrap intervals, paired tests, stability and pass@k.

Pure functions on plain sequences or numpy arrays; no I/O. Scores are in score points
(0..100) unless a docstring says otherwise. Every random draw goes through
numpy.random.Generator(PCG64(seed)), so a report is reproducible from its seed.

Instances of one task are not independent (same data, same prompt skeleton), so intervals
resample tasks (clusters) and keep all instances of each drawn task together.
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.stats
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
Numbers = Sequence[float] | NDArray[Any]

# Absolute tolerance, in score points, below which repeated scores count as equal: re-summing
# unit weights in a different order must not register as a changed instance.
SCORE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Interval:
    """A point estimate with a percentile bootstrap interval.

    ``resamples`` is the number of bootstrap statistics the percentiles were taken over:
    0 when the interval collapsed to the estimate because there was a single cluster, fewer
    than requested when resamples with zero total weight were skipped.
    """

    estimate: float
    low: float
    high: float
    level: float
    resamples: int
    seed: int
    clusters: int

    @property
    def collapsed(self) -> bool:
        """True when no resampling was possible (one cluster) and low == high == estimate."""
        return self.resamples == 0


@dataclass(frozen=True)
class PairedTest:
    """Paradigm/model B against A on the same items: counts, mean of b - a, CI and p-values."""

    n: int
    wins: int  # b > a
    losses: int  # b < a
    ties: int
    mean_difference: float
    ci: Interval
    sign_p: float
    wilcoxon_p: float
    mdd: float | None = None  # minimum detectable difference at 80% power (None: under 2 clusters)


# ---------------------------------------------------------------------------- validation


def _vector(values: Numbers, name: str) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (got shape {array.shape})")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return array


def _nonempty_vector(values: Numbers, name: str) -> FloatArray:
    array = _vector(values, name)
    if array.size == 0:
        raise ValueError(f"{name} is empty")
    return array


def _weights(weights: Numbers | None, n: int) -> FloatArray:
    if weights is None:
        return np.ones(n)
    w = _vector(weights, "weights")
    if w.size != n:
        raise ValueError(f"weights has {w.size} entries for {n} values")
    if np.any(w < 0):
        raise ValueError("weights must be non-negative")
    if w.sum() <= 0:
        raise ValueError("weights sum to zero: the weighted mean is undefined")
    return w


def _cluster_index(clusters: Sequence[Hashable], n: int) -> NDArray[np.intp]:
    """Map labels to 0..k-1 in a canonical order, so row order does not change the draws."""
    if len(clusters) != n:
        raise ValueError(f"clusters has {len(clusters)} labels for {n} values")
    index = {label: i for i, label in enumerate(sorted(set(clusters), key=repr))}
    return np.fromiter((index[label] for label in clusters), dtype=np.intp, count=n)


def _check_bootstrap_args(resamples: int, level: float) -> None:
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1 (got {resamples})")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1) (got {level})")


def _differences(a: Numbers, b: Numbers) -> FloatArray:
    va = _nonempty_vector(a, "a")
    vb = _nonempty_vector(b, "b")
    if va.size != vb.size:
        raise ValueError(f"a and b must pair up (got {va.size} and {vb.size} items)")
    return vb - va


# ----------------------------------------------------------------------------- bootstrap


def cluster_bootstrap(
    values: Numbers,
    clusters: Sequence[Hashable],
    weights: Numbers | None = None,
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval:
    """Weighted mean sum(w*v)/sum(w) with a cluster bootstrap percentile interval.

    Each resample draws as many clusters as there are, with replacement, and keeps every
    item of each drawn cluster. The estimate is the statistic on the full data; low and high
    are the (1-level)/2 and (1+level)/2 quantiles (numpy's linear interpolation) of the
    resampled statistics. Weights default to 1 and must be non-negative with a positive
    sum; a resample whose drawn clusters all have zero weight is skipped. With a single
    cluster nothing can vary, so the interval collapses to the estimate (resamples=0).
    Deterministic for a seed and independent of the order of rows.
    """
    v = _nonempty_vector(values, "values")
    labels = _cluster_index(clusters, v.size)
    w = _weights(weights, v.size)
    _check_bootstrap_args(resamples, level)
    k = int(labels.max()) + 1
    # Per-cluster sums turn every resample into two dot products with its cluster counts.
    sum_wv = np.bincount(labels, weights=w * v, minlength=k)
    sum_w = np.bincount(labels, weights=w, minlength=k)
    estimate = float(sum_wv.sum() / sum_w.sum())
    if k == 1:
        return Interval(estimate, estimate, estimate, level, 0, seed, 1)
    rng = np.random.Generator(np.random.PCG64(seed))
    counts = rng.multinomial(k, np.full(k, 1.0 / k), size=resamples).astype(np.float64)
    numerators = counts @ sum_wv
    denominators = counts @ sum_w
    kept = denominators > 0
    statistics = numerators[kept] / denominators[kept]
    if statistics.size == 0:
        raise ValueError("every resample drew only zero-weight clusters; raise resamples")
    low, high = np.quantile(statistics, [(1 - level) / 2, (1 + level) / 2])
    return Interval(estimate, float(low), float(high), level, int(statistics.size), seed, k)


def paired_bootstrap(
    a: Numbers,
    b: Numbers,
    clusters: Sequence[Hashable],
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval:
    """Mean of b - a over paired items, with a cluster bootstrap interval (see cluster_bootstrap)."""
    return cluster_bootstrap(_differences(a, b), clusters, resamples=resamples, seed=seed, level=level)


# --------------------------------------------------------------------------- paired tests


def sign_test(a: Numbers, b: Numbers) -> float:
    """Exact two-sided binomial (sign) test p-value on the signs of b - a.

    Ties (b == a) are dropped; with no non-tied pair there is no evidence either way and
    the p-value is 1.0. Empty or unequal-length inputs raise ValueError.
    """
    return _sign_p(_differences(a, b))


def _sign_p(d: FloatArray) -> float:
    wins = int(np.count_nonzero(d > 0))
    decided = wins + int(np.count_nonzero(d < 0))
    if decided == 0:
        return 1.0
    return float(scipy.stats.binomtest(wins, decided, 0.5, alternative="two-sided").pvalue)


def wilcoxon(a: Numbers, b: Numbers) -> float:
    """Two-sided Wilcoxon signed-rank p-value on b - a, zero differences dropped.

    With no non-zero difference the p-value is 1.0 (scipy would warn or fail). Otherwise
    scipy.stats.wilcoxon with method="auto" on the non-zero differences: the exact null
    distribution for up to 50 pairs without tied magnitudes, an exhaustive permutation
    test for up to 13 pairs with ties, the normal approximation beyond. Empty or
    unequal-length inputs raise ValueError.
    """
    return _wilcoxon_p(_differences(a, b))


def _wilcoxon_p(d: FloatArray) -> float:
    nonzero = d[d != 0]
    if nonzero.size == 0:
        return 1.0
    result = scipy.stats.wilcoxon(nonzero, zero_method="wilcox", alternative="two-sided", method="auto")
    return float(result.pvalue)


def paired_test(
    a: Numbers,
    b: Numbers,
    clusters: Sequence[Hashable],
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> PairedTest:
    """B against A on paired items: wins/losses/ties, mean b - a, cluster bootstrap CI, sign and Wilcoxon p."""
    d = _differences(a, b)
    wins = int(np.count_nonzero(d > 0))
    losses = int(np.count_nonzero(d < 0))
    ci = cluster_bootstrap(d, clusters, resamples=resamples, seed=seed, level=level)
    se = clustered_standard_error(d, clusters)
    return PairedTest(
        n=int(d.size),
        wins=wins,
        losses=losses,
        ties=int(d.size) - wins - losses,
        mean_difference=float(d.mean()),
        ci=ci,
        sign_p=_sign_p(d),
        wilcoxon_p=_wilcoxon_p(d),
        mdd=None if se is None else detectable_difference(se),
    )


def clustered_standard_error(values: Numbers, clusters: Sequence[Hashable]) -> float | None:
    """The cluster-robust standard error of the mean of `values` (for paired differences:
    of the mean difference): sqrt(G/(G-1) * sum over clusters of (sum of v - mean)^2) / n,
    G the number of clusters. None with fewer than two clusters (nothing to estimate from)."""
    v = _nonempty_vector(values, "values")
    labels = _cluster_index(clusters, v.size)
    groups = int(labels.max()) + 1
    if groups < 2:
        return None
    sums = np.bincount(labels, weights=v - v.mean(), minlength=groups)
    return float(math.sqrt(groups / (groups - 1) * float(np.dot(sums, sums))) / v.size)


def detectable_difference(standard_error: float, *, power: float = 0.8, alpha: float = 0.05) -> float:
    """The smallest true difference a two-sided test at `alpha` detects with probability
    `power`, for an estimate with this standard error: (z_{1-alpha/2} + z_power) x SE."""
    normal = scipy.stats.norm
    return float((normal.ppf(1 - alpha / 2) + normal.ppf(power)) * standard_error)


# ------------------------------------------------------------------ stability and trends


def _mean_pairwise_abs_difference(values: FloatArray) -> float:
    """2/(n(n-1)) * sum_{i<j} |x_i - x_j| for n >= 2, via sorting in O(n log n)."""
    n = values.size
    ordered = np.sort(values)
    # In sorted order x_k is the larger element of k pairs and the smaller of n-1-k pairs.
    coefficients = 2 * np.arange(n) - (n - 1)
    return float(2 * np.dot(coefficients, ordered) / (n * (n - 1)))


def mpad(scores: Numbers) -> float | None:
    """BrainBench's within-task stability: mean pairwise absolute difference of instance scores.

    Scores are given in 0..100 and normalised to 0..1, so the result is
    2/(n(n-1)) * sum_{i<j} |s_i - s_j| in 0..1 (0: every instance of the task scored the
    same). None for fewer than two scores; scores outside 0..100 raise ValueError.
    """
    s = _vector(scores, "scores")
    if np.any((s < 0) | (s > 100)):
        raise ValueError("scores must lie in 0..100")
    if s.size < 2:
        return None
    return _mean_pairwise_abs_difference(s / 100.0)


def dai(delta_by_level: Mapping[int, float]) -> float | None:
    """Difficulty Advantage Index: OLS slope of Δ over difficulty level.

    Δ is paradigm B's mean score minus paradigm A's, in score points, per difficulty level
    (easy=1, medium=2, hard=3); the DAI is the ordinary least-squares slope of Δ over the
    levels present, in score points per level. Positive: B's advantage widens as tasks get
    harder; negative: it shrinks (or A's advantage grows). None when fewer than two levels
    are present. Leave a level out rather than passing a missing Δ.
    """
    if len(delta_by_level) < 2:
        return None
    levels = np.array(list(delta_by_level.keys()), dtype=np.float64)
    deltas = _vector(list(delta_by_level.values()), "delta_by_level values")
    centred = levels - levels.mean()
    return float(np.dot(centred, deltas - deltas.mean()) / np.dot(centred, centred))


# ----------------------------------------------------------------------------- pass@k


def _check_counts(n: int, c: int, k: int) -> None:
    if n < 1:
        raise ValueError(f"n must be >= 1 (got n={n})")
    if not 0 <= c <= n:
        raise ValueError(f"c must satisfy 0 <= c <= n (got c={c}, n={n})")
    if not 1 <= k <= n:
        raise ValueError(f"k must satisfy 1 <= k <= n (got k={k}, n={n})")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k)/C(n, k) for c passes among n attempts.

    The probability that at least one of k attempts drawn without replacement passed.
    """
    _check_counts(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """tau-bench's pass^k: C(c, k)/C(n, k), the probability that all k drawn attempts passed."""
    _check_counts(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


# ----------------------------------------------------------------------------- repeats


def _repeated(scores_by_instance: Mapping[str, Sequence[float]]) -> list[FloatArray]:
    epochs = [_vector(scores, f"scores of {name!r}") for name, scores in scores_by_instance.items()]
    return [scores for scores in epochs if scores.size >= 2]


def changed_share(scores_by_instance: Mapping[str, Sequence[float]]) -> float | None:
    """Share of repeated instances whose scores differ across epochs (BrainBench E.7).

    Only instances with at least two epochs count. An instance changed when its highest
    and lowest score differ by more than SCORE_TOLERANCE score points. None when no
    instance was run twice.
    """
    repeated = _repeated(scores_by_instance)
    if not repeated:
        return None
    changed = sum(1 for scores in repeated if np.ptp(scores) > SCORE_TOLERANCE)
    return changed / len(repeated)


def mean_abs_difference(scores_by_instance: Mapping[str, Sequence[float]]) -> float | None:
    """Mean absolute score difference across repeated runs, in score points (BrainBench E.7).

    Per instance with at least two epochs, the mean pairwise absolute difference of its
    epochs' scores; then the plain mean over all those instances, unchanged ones included
    (they contribute 0). None when no instance was run twice.
    """
    repeated = _repeated(scores_by_instance)
    if not repeated:
        return None
    return float(np.mean([_mean_pairwise_abs_difference(scores) for scores in repeated]))


def epoch_mean_sd(means_per_epoch: Numbers) -> tuple[float, float | None]:
    """Mean and sample standard deviation (ddof=1) of per-epoch mean scores; SD None for one epoch."""
    means = _nonempty_vector(means_per_epoch, "means_per_epoch")
    if means.size < 2:
        return float(means[0]), None
    return float(means.mean()), float(means.std(ddof=1))
