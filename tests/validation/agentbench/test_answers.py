from validation.agentbench.answers import (
    expand_hypnogram,
    read_intervals,
    read_label,
    read_option,
    read_stage,
    run_length,
)

OPTIONS = {"A": "Hypsarrhythmia", "B": "1-2 Hz spike & wave", "C": "3 Hz spike & wave",
           "D": "Generalized polyspikes"}


def test_option_forms():
    for text in ("C", "(C)", "Option C", "option: c", "C. 3 Hz spike & wave", "3 Hz spike & wave",
                 " c ", "C)"):
        assert read_option(text, OPTIONS) == "C", text
    for text in ("", "E", "C or D", None, 3, "spike & wave"):
        assert read_option(text, OPTIONS) is None, text


def test_labels_lowercased_and_stripped():
    assert read_label("  Epileptic ", ["normal", "epileptic"]) == "epileptic"
    assert read_label("ad", ["AD", "FTD", "HC"]) == "AD"
    assert read_label("dementia", ["AD", "FTD", "HC"]) is None
    assert read_label(None, ["AD", "FTD", "HC"]) is None


def test_interval_forms():
    assert read_intervals([[1, 2], {"start": 3, "end": 4.5}, {"onset": "5", "offset": 6}]) == [
        (1.0, 2.0), (3.0, 4.5), (5.0, 6.0)]
    assert read_intervals("[[1, 2]]") == [(1.0, 2.0)]
    assert read_intervals([]) == []
    for bad in (None, "none", [[2, 1]], [[1, "x"]], [[1, 2, 3]], {"start": 1}):
        assert read_intervals(bad) is None, bad


def test_gaps_become_wake():
    assert expand_hypnogram([[0, 1, "N2"], [4, 4, "REM"]], 6) == ["N2", "N2", "W", "W", "REM", "W"]


def test_last_written_wins():
    assert expand_hypnogram([[0, 3, "N2"], [1, 2, "N3"], [2, 2, "N1"]], 4) == ["N2", "N3", "N1", "N2"]


def test_unknown_stage_is_wake():
    assert expand_hypnogram([[0, 2, "N2"], [1, 1, "deep"], [2, 2, "S4"]], 3) == ["N2", "W", "N3"]
    assert read_stage("Sleep stage R") == "REM"


def test_malformed_rows_skipped():
    rows = [[0, 2, "N2"], [1], "x", [2, 1, "N3"], [0.5, 1, "N3"], {"start": 1, "end": 1, "stage": "REM"}]
    assert expand_hypnogram(rows, 3) == ["N2", "REM", "N2"]


def test_tail_truncated_and_short_padded_with_wake():
    assert expand_hypnogram([[0, 9, "N2"]], 3) == ["N2"] * 3
    assert expand_hypnogram([[0, 0, "N1"]], 3) == ["N1", "W", "W"]


def test_missing_or_empty_is_all_wake():
    for value in (None, [], "no idea", "[broken"):
        assert expand_hypnogram(value, 2) == ["W", "W"]


def test_run_length_round_trip():
    labels = ["W", "W", "N1", "N2", "N2", "W"]
    assert run_length(labels) == [[0, 1, "W"], [2, 2, "N1"], [3, 4, "N2"], [5, 5, "W"]]
    assert expand_hypnogram(run_length(labels), len(labels)) == labels
