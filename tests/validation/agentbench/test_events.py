import pytest

from validation.agentbench.events import (
    dice,
    event_counts,
    f1_from_counts,
    fp_per_24h,
    merge_close,
    processed_events,
    split_long,
)

PAPER_REF = [(834, 894), (2378, 2497), (3362, 3425)]
PAPER_PRED = [(2354, 2500), (3358, 3426)]


def test_paper_t5_case_event_f1_and_dice():
    counts = event_counts(PAPER_REF, PAPER_PRED, 3600)
    assert (counts.tp, counts.fp, counts.fn) == (2, 0, 1)
    assert f1_from_counts(counts.tp, counts.fp, counts.fn) == pytest.approx(0.8)
    assert round(dice(PAPER_REF, PAPER_PRED, 3600), 3) == 0.798
    assert fp_per_24h(counts.fp, 3600) == 0.0


def test_gap_of_exactly_90_s_is_not_merged_and_89_9_is():
    assert merge_close([(0, 100), (1000, 1100)], 900) == [(0, 100), (1000, 1100)]
    assert merge_close([(0, 100), (999, 1100)], 900) == [(0, 1100)]


def test_merge_handles_unsorted_and_nested_events():
    assert merge_close([(500, 600), (0, 2000), (100, 200)], 900) == [(0, 2000)]


def test_long_events_split_into_300_s_pieces():
    assert split_long([(0, 7000)], 3000) == [(0, 3000), (3000, 6000), (6000, 7000)]
    assert split_long([(0, 3000)], 3000) == [(0, 3000)]


def test_processing_clips_and_quantizes():
    assert processed_events([(-5, 10.04), (3599.95, 4000)], 3600) == [(0, 100)]


def test_tolerance_boundaries():
    ref = [(1000, 1010)]
    # extended reference is [970, 1070]; touching it is not an overlap
    assert event_counts(ref, [(960, 970)], 3600).tp == 0
    assert event_counts(ref, [(960, 970.1)], 3600).tp == 1
    assert event_counts(ref, [(1070, 1080)], 3600).fp == 1
    assert event_counts(ref, [(1069.9, 1080)], 3600).fp == 0


def test_one_prediction_detects_two_references_and_extra_predictions_are_free():
    ref = [(100, 110), (300, 310)]  # 190 s apart: not merged
    counts = event_counts(ref, [(105, 305)], 3600)
    assert (counts.tp, counts.fp, counts.fn) == (2, 0, 0)
    counts = event_counts([(1000, 1010)], [(980, 985), (1050, 1060)], 3600)
    assert (counts.tp, counts.fp, counts.fn) == (1, 0, 0)


def test_dice_conventions():
    assert dice([], []) == 1.0
    assert dice([(0, 10)], []) == 0.0
    assert dice([], [(0, 10)]) == 0.0
    assert dice([(0, 10)], [(0, 5), (3, 10)]) == 1.0  # overlapping predictions not counted twice
    assert dice([(10, 20)], [(0, 3600)], 3600) == pytest.approx(2 * 10 / (10 + 3600))
