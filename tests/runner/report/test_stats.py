from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from runner.report.stats import (
    Interval,
    changed_share,
    cluster_bootstrap,
    dai,
    epoch_mean_sd,
    mean_abs_difference,
    mpad,
    paired_bootstrap,
    paired_test,
    pass_at_k,
    pass_hat_k,
    sign_test,
    wilcoxon,
)

# ------------------------------------------------------------------------ cluster bootstrap


def test_estimate_is_the_weighted_mean_of_all_items() -> None:
    interval = cluster_bootstrap([0.0, 100.0, 40.0], ["t1", "t1", "t2"], [1.0, 3.0, 0.0])
    assert interval.estimate == pytest.approx(75.0)
    assert cluster_bootstrap([10.0, 20.0, 60.0], ["a", "b", "b"]).estimate == pytest.approx(30.0)


def test_identical_clusters_collapse_the_interval() -> None:
    values = [1.0, 2.0, 3.0] * 4
    clusters = [task for task in "abcd" for _ in range(3)]
    interval = cluster_bootstrap(values, clusters, resamples=500)
    assert interval.estimate == pytest.approx(2.0)
    assert interval.low == pytest.approx(2.0)
    assert interval.high == pytest.approx(2.0)
    assert interval.resamples == 500
    assert interval.clusters == 4
    assert not interval.collapsed


def test_single_cluster_collapses_to_the_estimate_without_resampling() -> None:
    interval = cluster_bootstrap([10.0, 30.0, 80.0], ["t", "t", "t"], seed=7, level=0.9)
    assert interval == Interval(40.0, 40.0, 40.0, 0.9, 0, 7, 1)
    assert interval.collapsed


def test_deterministic_for_a_seed_and_different_for_another() -> None:
    rng = np.random.default_rng(1)
    values = rng.uniform(0, 100, 120)
    clusters = [f"task{i % 17}" for i in range(120)]
    first = cluster_bootstrap(values, clusters, seed=3)
    again = cluster_bootstrap(values, clusters, seed=3)
    other = cluster_bootstrap(values, clusters, seed=4)
    assert first == again
    assert other.estimate == first.estimate
    assert (other.low, other.high) != (first.low, first.high)
    assert first.low < first.estimate < first.high


def test_row_order_does_not_change_the_interval() -> None:
    rng = np.random.default_rng(2)
    values = list(rng.uniform(0, 100, 40))
    clusters = [f"t{i % 6}" for i in range(40)]
    rows = list(zip(values, clusters))
    random.Random(0).shuffle(rows)
    shuffled = cluster_bootstrap([v for v, _ in rows], [c for _, c in rows], seed=5)
    original = cluster_bootstrap(values, clusters, seed=5)
    assert shuffled.low == pytest.approx(original.low)
    assert shuffled.high == pytest.approx(original.high)


def _exact_quantile(support: list[float], probabilities: list[float], q: float) -> float:
    cumulative = 0.0
    for value, probability in zip(support, probabilities):
        cumulative += probability
        if cumulative >= q:
            return value
    return support[-1]


def test_monte_carlo_percentiles_match_the_exact_bootstrap_distribution() -> None:
    items = {"a": ([0.0, 10.0], [1.0, 1.0]), "b": ([50.0], [2.0]), "c": ([80.0, 90.0, 100.0], [1.0, 1.0, 1.0])}
    values = [v for vs, _ in items.values() for v in vs]
    weights = [w for _, ws in items.values() for w in ws]
    clusters = [name for name, (vs, _) in items.items() for _ in vs]
    # Every ordered draw of 3 clusters out of 3 has probability 1/27.
    distribution: dict[float, float] = {}
    for draw in itertools.product(items, repeat=3):
        drawn_values = [v for name in draw for v in items[name][0]]
        drawn_weights = [w for name in draw for w in items[name][1]]
        statistic = round(float(np.average(drawn_values, weights=drawn_weights)), 9)
        distribution[statistic] = distribution.get(statistic, 0.0) + 1 / 27
    support = sorted(distribution)
    probabilities = [distribution[value] for value in support]
    cdf = np.cumsum(probabilities)
    for level in (0.95, 0.6, 0.1):
        low_q, high_q = (1 - level) / 2, (1 + level) / 2
        # The exact quantile is only sharp when no CDF step sits near the target probability.
        assert np.min(np.abs(cdf - low_q)) > 0.01 and np.min(np.abs(cdf - high_q)) > 0.01
        interval = cluster_bootstrap(values, clusters, weights, resamples=40_000, seed=11, level=level)
        assert interval.low == pytest.approx(_exact_quantile(support, probabilities, low_q), abs=1e-6)
        assert interval.high == pytest.approx(_exact_quantile(support, probabilities, high_q), abs=1e-6)


def test_cluster_bootstrap_is_wider_than_item_bootstrap_for_correlated_items() -> None:
    cluster_values = np.random.default_rng(3).uniform(0, 100, 12)
    values = np.repeat(cluster_values, 10)  # all ten instances of a task score the same
    tasks = [f"task{i}" for i in range(12) for _ in range(10)]
    by_task = cluster_bootstrap(values, tasks, seed=0)
    by_item = cluster_bootstrap(values, list(range(values.size)), seed=0)
    assert by_task.estimate == pytest.approx(by_item.estimate)
    # Ten perfectly correlated items carry one item's information: about sqrt(10) wider.
    assert by_task.high - by_task.low > 2 * (by_item.high - by_item.low)


def test_resamples_with_zero_total_weight_are_skipped() -> None:
    interval = cluster_bootstrap([0.0, 60.0], ["zero", "positive"], [0.0, 1.0], resamples=1000, seed=1)
    assert interval.estimate == pytest.approx(60.0)
    assert interval.low == pytest.approx(60.0) and interval.high == pytest.approx(60.0)
    # Both draws land on the zero-weight cluster in about a quarter of the resamples.
    assert 650 < interval.resamples < 850


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([], []), {}, "values is empty"),
        (([1.0, 2.0], ["a"]), {}, "clusters has 1 labels"),
        (([1.0, float("nan")], ["a", "b"]), {}, "values contains NaN"),
        (([1.0, 2.0], ["a", "b"], [1.0, -1.0]), {}, "weights must be non-negative"),
        (([1.0, 2.0], ["a", "b"], [0.0, 0.0]), {}, "weights sum to zero"),
        (([1.0, 2.0], ["a", "b"], [1.0]), {}, "weights has 1 entries"),
        (([1.0, 2.0], ["a", "b"]), {"resamples": 0}, "resamples must be"),
        (([1.0, 2.0], ["a", "b"]), {"level": 1.0}, "level must be"),
    ],
)
def test_bootstrap_rejects_bad_input(args: tuple[object, ...], kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cluster_bootstrap(*args, **kwargs)  # type: ignore[arg-type]


def test_paired_bootstrap_is_the_mean_difference() -> None:
    a = [10.0, 20.0, 30.0, 40.0]
    b = [15.0, 20.0, 50.0, 30.0]
    interval = paired_bootstrap(a, b, ["x", "x", "y", "z"], seed=2)
    assert interval.estimate == pytest.approx((5 + 0 + 20 - 10) / 4)
    assert interval == cluster_bootstrap([5.0, 0.0, 20.0, -10.0], ["x", "x", "y", "z"], seed=2)
    with pytest.raises(ValueError, match="a and b must pair up"):
        paired_bootstrap(a, b[:3], ["x", "x", "y"])


# ----------------------------------------------------------------------------- paired tests


def test_sign_test_by_hand() -> None:
    assert sign_test([0] * 5, [1] * 5) == pytest.approx(2 * 0.5**5)  # 5 wins, 0 losses
    assert sign_test([1] * 5, [0] * 5) == pytest.approx(0.0625)  # symmetric
    # 6 wins, 1 loss, 2 ties dropped: 2 * P(X <= 1 | n=7) = 2 * (1 + 7) / 128.
    a = [0.0] * 9
    b = [1.0] * 6 + [-1.0] + [0.0, 0.0]
    assert sign_test(a, b) == pytest.approx(0.125)
    assert sign_test([3.0, 4.0], [3.0, 4.0]) == 1.0


def test_wilcoxon_by_hand() -> None:
    zeros = [0.0] * 6
    # All five differences positive: W- = 0, P = 2 / 2^5.
    assert wilcoxon(zeros[:5], [1.0, 2.0, 3.0, 4.0, 5.0]) == pytest.approx(0.0625)
    # Only rank 2 negative: W- = 2; subsets of {1..5} with rank sum <= 2 are {}, {1}, {2}.
    assert wilcoxon(zeros[:5], [1.0, -2.0, 3.0, 4.0, 5.0]) == pytest.approx(2 * 3 / 32)
    # A zero difference is dropped, not ranked.
    assert wilcoxon(zeros, [0.0, 1.0, -2.0, 3.0, 4.0, 5.0]) == pytest.approx(2 * 3 / 32)
    assert wilcoxon(zeros[:3], zeros[:3]) == 1.0
    # Fourteen positive differences and a zero: still exact (2 / 2^14), not the normal approximation.
    assert wilcoxon([0.0] * 15, [float(i) for i in range(15)]) == pytest.approx(2 * 0.5**14)


def test_paired_tests_reject_empty_input() -> None:
    with pytest.raises(ValueError, match="a is empty"):
        sign_test([], [])
    with pytest.raises(ValueError, match="a and b must pair up"):
        wilcoxon([1.0], [1.0, 2.0])


def test_paired_test_assembles_counts_ci_and_p_values() -> None:
    a = [1.0, 2.0, 3.0, 4.0]
    b = [2.0, 2.0, 1.0, 7.0]  # differences 1, 0, -2, 3
    clusters = ["t1", "t1", "t2", "t3"]
    result = paired_test(a, b, clusters, seed=9, resamples=300)
    assert (result.n, result.wins, result.losses, result.ties) == (4, 2, 1, 1)
    assert result.mean_difference == pytest.approx(0.5)
    assert result.ci == paired_bootstrap(a, b, clusters, seed=9, resamples=300)
    assert result.sign_p == pytest.approx(1.0)  # 2 of 3: as balanced as 3 can be
    assert result.wilcoxon_p == pytest.approx(wilcoxon(a, b))


# ------------------------------------------------------------------------------------ mpad


def test_mpad_by_hand() -> None:
    assert mpad([0.0, 50.0, 100.0]) == pytest.approx(2 / 3)  # pairs .5, 1, .5
    assert mpad([40.0, 40.0]) == 0.0
    assert mpad([20.0, 80.0]) == pytest.approx(0.6)
    assert mpad([70.0]) is None
    assert mpad([]) is None


def test_mpad_matches_all_pairs() -> None:
    rng = np.random.default_rng(4)
    for n in range(2, 9):
        scores = list(rng.uniform(0, 100, n))
        pairs = [abs(x - y) / 100 for x, y in itertools.combinations(scores, 2)]
        assert mpad(scores) == pytest.approx(sum(pairs) / len(pairs))


def test_mpad_rejects_scores_outside_0_to_100() -> None:
    with pytest.raises(ValueError, match="scores must lie in 0..100"):
        mpad([50.0, 101.0])


# ------------------------------------------------------------------------------------- dai


def test_dai_is_the_least_squares_slope() -> None:
    assert dai({1: 10.0, 2: 4.0, 3: -2.0}) == pytest.approx(-6.0)
    assert dai({1: 0.0, 2: 3.0, 3: 12.0}) == pytest.approx(6.0)  # ((-1)(-5) + (1)(7)) / 2
    assert dai({1: 0.0, 2: 10.0, 3: 0.0}) == pytest.approx(0.0)
    assert dai({1: 2.0, 2: 5.0, 3: 11.0}) == pytest.approx(4.5)  # the README's example: ((-1)(-4) + (1)(5)) / 2
    assert dai({1: 0.0, 3: 10.0}) == pytest.approx(5.0)  # easy and hard only
    assert dai({3: -4.0, 2: 2.0}) == pytest.approx(-6.0)
    assert dai({2: 5.0}) is None
    assert dai({}) is None


# ------------------------------------------------------------------------------- pass@k


def test_pass_at_k_and_pass_hat_k_match_enumeration() -> None:
    for n in range(1, 7):
        for c in range(n + 1):
            outcomes = [True] * c + [False] * (n - c)
            for k in range(1, n + 1):
                draws = list(itertools.combinations(outcomes, k))
                assert pass_at_k(n, c, k) == pytest.approx(sum(any(d) for d in draws) / len(draws))
                assert pass_hat_k(n, c, k) == pytest.approx(sum(all(d) for d in draws) / len(draws))


def test_pass_at_1_is_the_pass_rate() -> None:
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_hat_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(5, 0, 5) == 0.0 and pass_at_k(5, 1, 5) == 1.0
    assert pass_hat_k(4, 3, 4) == 0.0 and pass_hat_k(4, 4, 4) == 1.0
    assert pass_at_k(100, 50, 10) == pytest.approx(1 - math.comb(50, 10) / math.comb(100, 10))


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [(3, 1, 0, "k must"), (3, 1, 4, "k must"), (3, -1, 1, "c must"), (3, 4, 1, "c must"), (0, 0, 1, "n must")],
)
def test_pass_at_k_names_the_bad_argument(n: int, c: int, k: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError, match=message):
        pass_hat_k(n, c, k)


# -------------------------------------------------------------------------------- repeats


def test_changed_share_and_mean_abs_difference() -> None:
    scores = {"a": [50.0, 50.0], "b": [0.0, 100.0, 100.0], "c": [30.0]}
    assert changed_share(scores) == pytest.approx(0.5)  # c has one epoch and does not count
    # a: 0; b: (100 + 100 + 0) / 3; mean over a and b.
    assert mean_abs_difference(scores) == pytest.approx((0 + 200 / 3) / 2)


def test_float_noise_is_not_a_change() -> None:
    assert changed_share({"a": [0.1 + 0.2, 0.3]}) == 0.0


def test_repeats_without_repeated_instances_are_none() -> None:
    assert changed_share({"a": [10.0], "b": [20.0]}) is None
    assert mean_abs_difference({}) is None


def test_epoch_mean_sd() -> None:
    assert epoch_mean_sd([60.0, 70.0, 80.0]) == pytest.approx((70.0, 10.0))
    assert epoch_mean_sd([55.0]) == (55.0, None)
    with pytest.raises(ValueError, match="means_per_epoch is empty"):
        epoch_mean_sd([])


def test_the_detectable_difference_is_2_8_cluster_robust_standard_errors() -> None:
    from runner.report.stats import clustered_standard_error, detectable_difference, paired_test

    a = [0.0, 0.0, 100.0, 50.0, 0.0, 100.0]
    b = [100.0, 0.0, 100.0, 100.0, 0.0, 0.0]
    tasks = ["x", "x", "y", "y", "z", "z"]
    d = [y - x for x, y in zip(a, b)]  # 100, 0, 0, 50, 0, -100: mean 50/6
    centre = sum(d) / 6
    sums = [d[0] + d[1] - 2 * centre, d[2] + d[3] - 2 * centre, d[4] + d[5] - 2 * centre]
    by_hand = math.sqrt(3 / 2 * sum(s * s for s in sums)) / 6
    assert clustered_standard_error(d, tasks) == pytest.approx(by_hand)
    assert detectable_difference(by_hand) == pytest.approx((1.959964 + 0.841621) * by_hand, rel=1e-6)
    assert paired_test(a, b, tasks).mdd == pytest.approx(detectable_difference(by_hand))
    assert clustered_standard_error(d, ["x"] * 6) is None  # one task: nothing to estimate from
