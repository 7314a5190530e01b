"""Binders (runner/benchmark/datasets/binders.py): needs, channel roles, windows, the hypnogram CSV."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from runner.benchmark.datasets.base import Channel, Recording
from runner.benchmark.datasets.binders import (
    BINDERS,
    Unfit,
    channel_pair_window,
    channel_set,
    core_name,
    hypnogram_csv,
    one_channel_window,
    unfit_reason,
)
from runner.benchmark.datasets.needs import LocalRules, Needs


def recording(names: list[tuple[str, str]], sfreq: float = 256.0, duration_s: float = 600.0,
              stages: tuple[str, ...] | None = None, events: dict | None = None) -> Recording:
    return Recording(dataset="toy", key="R1", subject="1", signal=Path("/nowhere/r1.edf"), suffix=".edf",
                     channels=tuple(Channel(n, k) for n, k in names), sfreq=sfreq, duration_s=duration_s,
                     description="an EDF file of toy EEG", stages=stages, events=events or {})


PSG = [("EEG F4-M1", "eeg"), ("EEG C4-M1", "eeg"), ("EEG O2-M1", "eeg"), ("EEG C3-M2", "eeg"),
       ("EMG chin", "emg"), ("EOG E1-M2", "eog")]


@pytest.mark.parametrize("stored, core", [("O1..", "O1"), ("Fp1.", "FP1"), ("EEG O1-A2", "O1"), ("O1-M2", "O1"),
                                          ("EEG Fpz-Cz", "FPZ"), ("C4-A1", "C4"), ("EEG A2-A1", "A2")])
def test_core_name_strips_each_datasets_decoration(stored, core):
    assert core_name(stored) == core


@pytest.mark.parametrize("needs, reason", [
    (Needs(hypnogram=True), "no sleep hypnogram"),
    (Needs(eog=True), "no EOG channel"),
    (Needs(min_eeg_channels=5), "4 EEG channel(s), the task needs 5"),
    (Needs(sfreq_hz=(300, 1000)), "sampling rate 256 Hz outside 300-1000 Hz"),
    (Needs(min_duration_s=900), "600 s long, the task needs 900 s"),
    (Needs(event_kinds=["T1"]), "0 event(s) of kind 'T1'"),
])
def test_a_missing_need_is_named(needs, reason):
    psg_without_eog = recording(PSG[:5])
    assert unfit_reason(psg_without_eog, needs) == reason


def test_a_recording_meeting_every_need_fits():
    full = recording(PSG, stages=("W", "N1"), events={"T1": (1.0, 5.0)})
    assert unfit_reason(full, Needs(hypnogram=True, eog=True, emg=True, min_eeg_channels=4, sfreq_hz=(100, 512),
                                    min_duration_s=600, event_kinds=["T1"], min_events=2)) is None
    assert unfit_reason(full, Needs(event_kinds=["T1"], min_events=3)) == "2 event(s) of kind 'T1'"


def test_one_channel_prefers_the_declared_sites_and_keeps_the_stored_name():
    rec = recording(PSG)
    for seed in range(20):
        params = one_channel_window(rec, {"prefer": ["O2"], "window_s": 30}, random.Random(seed)).params
        assert params["channel"] == "EEG O2-M1"
        assert 0 <= params["start_s"] <= 570 and params["length_s"] == 30
        assert params["recording"] == rec.description


def test_window_end_and_fixed_params():
    params = one_channel_window(recording(PSG), {"window_s": 60, "window_end": True, "fixed": {"fit_low_hz": 2}},
                                random.Random(1)).params
    assert params["end_s"] - params["start_s"] == 60 and "length_s" not in params and params["fit_low_hz"] == 2
    with pytest.raises(Unfit, match="shorter than the task's 900-s window"):
        one_channel_window(recording(PSG), {"window_s": 900}, random.Random(1))


def test_homologous_pairs_are_left_odd_right_even():
    rec = recording([("Fp1.", "eeg"), ("Fp2.", "eeg"), ("O1..", "eeg"), ("O2..", "eeg"), ("Cz..", "eeg")])
    seen = {tuple(channel_pair_window(rec, {"params": ["a", "b"]}, random.Random(s)).params[k] for k in "ab")
            for s in range(30)}
    assert seen == {("Fp1.", "Fp2."), ("O1..", "O2..")}
    with pytest.raises(Unfit, match="no homologous"):
        channel_pair_window(recording([("EEG Fpz-Cz", "eeg"), ("EEG Pz-Oz", "eeg")]), {}, random.Random(0))


def test_channel_set_is_in_file_order_and_needs_enough_channels():
    rec = recording(PSG)
    chosen = channel_set(rec, {"count": 3}, random.Random(4)).params["channels"]
    eeg = rec.of_kind("eeg")
    assert len(chosen) == 3 and chosen == sorted(chosen, key=eeg.index)
    with pytest.raises(Unfit, match="4 EEG channel"):
        channel_set(rec, {"count": 5}, random.Random(4))


def test_hypnogram_csv_spans_the_scored_night_in_four_stage_codes():
    stages = ("?", "W", "N1", "N2", "N3", "REM", "W", "?")
    proposal = hypnogram_csv(recording(PSG, stages=stages), {"subject": "s01"}, random.Random(0))
    (suffix, make), = proposal.derived.items()
    assert suffix == ".csv" and proposal.params["n_epochs"] == 6
    assert make().decode().splitlines() == ["subject,epoch,reference", "s01,1,0", "s01,2,1", "s01,3,1", "s01,4,2",
                                            "s01,5,3", "s01,6,0"]


@pytest.mark.parametrize("stages, reason", [(("W", "?", "N2", "REM"), "unscored epochs inside the night"),
                                            (("W", "N2", "N3"), "no REM sleep scored"),
                                            (("?", "?"), "no scored epoch")])
def test_hypnogram_csv_refuses_nights_the_sleep_tasks_cannot_use(stages, reason):
    with pytest.raises(Unfit, match=reason):
        hypnogram_csv(recording(PSG, stages=stages), {}, random.Random(0))


def test_binders_are_deterministic_for_a_seed():
    rec = recording(PSG, stages=("W", "N2", "REM"))
    for name, binder in BINDERS.items():
        first = binder(rec, {"count": 2}, random.Random(9))
        again = binder(rec, {"count": 2}, random.Random(9))
        assert first.params == again.params, name


def test_every_declared_binder_exists_and_needs_validate():
    from runner.benchmark import truth

    declared = [spec for spec in truth.load_tasks(Path(__file__).resolve().parents[4]) if spec.local is not None]
    assert len(declared) >= 9
    assert all(spec.local.binder in BINDERS for spec in declared)
    with pytest.raises(ValueError, match="sfreq_hz"):
        LocalRules(binder="channel_set", needs={"sfreq_hz": [500, 100]})
