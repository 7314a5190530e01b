from collections import Counter
from pathlib import Path

import pytest

from runner.benchmark.agentbench.adapters import bonn, chbmit, ds004504, sleepedfx
from runner.benchmark.agentbench.adapters.base import AdapterError
from runner.core.paths import Environment
from tests.fixtures import datasets as fx
from validation.agentbench.answers import expand_hypnogram


def test_bonn_uses_z_o_s_balanced(tmp_path):
    task = bonn.build(fx.make_bonn(tmp_path / "bonn"))
    sources = Counter(case.params["source"].split("/")[0] for case in task.cases)
    assert sources == {"Z": 2, "O": 2, "S": 4}  # k = min(3, 2, 5 // 2) = 2
    assert Counter(case.params["answer"] for case in task.cases) == {"normal": 4, "epileptic": 4}
    assert all(case.params["n_samples"] == 4097 for case in task.cases)
    assert all(case.name.startswith("b") and "S" not in case.name for case in task.cases)


def test_bonn_layout_errors_name_the_folder(tmp_path):
    (tmp_path / "Z").mkdir()
    (tmp_path / "Z" / "Z001.txt").write_text("1\n2\n")
    with pytest.raises(AdapterError, match="no folder O/"):
        bonn.build(tmp_path)


def test_ds004504_groups_balanced_and_labelled(tmp_path):
    task = ds004504.build(fx.make_ds004504(tmp_path / "ds"))
    assert Counter(case.params["answer"] for case in task.cases) == {"AD": 2, "FTD": 2, "HC": 2}
    by_source = {case.params["source"]: case.params["answer"] for case in task.cases}
    assert "sub-008" not in by_source  # listed without a recording
    assert all(fx.DS004504_GROUPS[sid] == {"AD": "A", "FTD": "F", "HC": "C"}[label]
               for sid, label in by_source.items())
    assert all(case.files[0][0].suffix == ".set" for case in task.cases)


def test_ds004504_separate_fdt_is_staged_beside_the_set(tmp_path):
    root = fx.make_ds004504(tmp_path / "ds")
    (root / "sub-001" / "eeg" / "sub-001_task-eyesclosed_eeg.fdt").write_bytes(b"\0" * 8)
    task = ds004504.build(root)
    case = next(c for c in task.cases if c.params["source"] == "sub-001")
    assert [suffix for _, suffix in case.files] == [".set", ".fdt"]


def test_chbmit_summary_parser_on_the_real_summaries():
    folder = Environment.from_os().paths.data_root / "epilepsy2bids"
    chb05 = chbmit.parse_summary((folder / "chb05-summary.txt").read_text(), "chb05")
    chb08 = chbmit.parse_summary((folder / "chb08-summary.txt").read_text(), "chb08")
    assert (len(chb05), len(chb08)) == (39, 20)
    seizures05 = {r.file_name: r.seizures for r in chb05 if r.seizures}
    seizures08 = {r.file_name: r.seizures for r in chb08 if r.seizures}
    assert len(seizures05) == 5 and len(seizures08) == 5
    assert seizures05["chb05_06.edf"] == ((417.0, 532.0),)  # "Seizure Start Time:" spelling
    assert seizures08["chb08_02.edf"] == ((2670.0, 2841.0),)  # "Seizure 1 Start Time:" spelling
    assert seizures08["chb08_05.edf"] == ((2856.0, 3046.0),)


def test_chbmit_summary_count_mismatch_is_named():
    text = "File Name: x.edf\nNumber of Seizures in File: 2\nSeizure Start Time: 1 seconds\nSeizure End Time: 2 seconds\n"
    with pytest.raises(AdapterError, match="x.edf announces 2"):
        chbmit.parse_summary(text, "s")


def test_chbmit_cases_balanced_with_subject_and_duration(tmp_path):
    task = chbmit.build(fx.make_chbmit(tmp_path / "chb"))
    positive = [c for c in task.cases if c.params["answer"]]
    assert len(positive) == 2 and len(task.cases) == 4
    by_source = {c.params["source"]: c.params for c in task.cases}
    assert by_source["chb01/chb01_02.edf"]["answer"] == [[300.0, 340.0], [900.0, 1010.0]]
    assert by_source["chb01/chb01_02.edf"]["duration_s"] == 1800.0
    assert by_source["chb02/chb02_01.edf"]["subject"] == "chb02"
    assert "chb01/chb01_04.edf" not in by_source  # listed in the summary, absent on disk


@pytest.mark.parametrize("labels, expected", [
    # wake at or below the largest sleep stage: untouched
    (["W"] * 2 + ["N2"] * 8 + ["W"], (0, 11, "untrimmed")),
    # edge wake trimmed until wake equals the largest stage (N2 = 6), split between the ends
    (["W"] * 10 + ["N2"] * 6 + ["W"] * 10, (7, 19, "to_target")),
    # short leading run: the other end keeps the rest
    (["W"] * 1 + ["N2"] * 6 + ["W"] * 10, (0, 12, "to_target")),
    # interior wake keeps it above target even fully trimmed: buffer of 10 at each end
    (["W"] * 14 + ["N2"] * 3 + ["W"] * 6 + ["REM"] * 2 + ["W"] * 13, (4, 35, "buffer")),
    # first epoch already sleep: that end untouched
    (["N2"] * 4 + ["W"] * 20, (0, 8, "to_target")),
])
def test_edge_wake_trimming_rules(labels, expected):
    assert sleepedfx.trim_window(labels, 30) == expected


def test_trimming_with_60_s_records_only_trims_less():
    labels = ["W"] * 15 + ["N2"] * 6 + ["REM"] * 4 + ["W"] * 11
    assert sleepedfx.trim_window(labels, 30)[:2] == (12, 28)
    labels = ["W"] * 16 + ["N2"] * 6 + ["REM"] * 4 + ["W"] * 11  # 30 s cut would be at 13
    assert sleepedfx.trim_window(labels, 30)[:2] == (13, 29)
    assert sleepedfx.trim_window(labels, 60)[:2] == (12, 30)


def test_sleepedfx_cases_from_fixture(tmp_path):
    root = fx.make_sleepedfx(tmp_path / "sleep")
    task = sleepedfx.build(root)
    by_source = {c.params["source"]: c for c in task.cases}
    assert set(by_source) == {"SC4001E0-PSG.edf", "ST7011J0-PSG.edf", "SC4002E0-PSG.edf",
                              "SC4003E0-PSG.edf"}  # SC4004E: no sleep, skipped
    case = by_source["SC4001E0-PSG.edf"]
    full = fx.expected_sleep_labels("SC4001E")
    trim = case.params["trim"]
    kept = expand_hypnogram(case.params["answer"], case.params["n_epochs"])
    assert kept == full[trim["first_epoch"]:trim["stop_epoch"]]
    assert kept.count("W") == max(kept.count(s) for s in ("N1", "N2", "N3", "REM"))
    trimmed = tmp_path / "t.edf"
    trimmed.write_bytes(case.content[".edf"]())
    from runner.benchmark.agentbench.edf import read_header
    assert read_header(trimmed).duration_s == case.params["n_epochs"] * 30
    assert "untrimmed" == by_source["SC4003E0-PSG.edf"].params["trim"]["rule"]
    assert not by_source["SC4003E0-PSG.edf"].content  # untrimmed: the source file itself


def test_sleepedfx_without_pairs_is_named(tmp_path):
    (tmp_path / "SC4001E0-PSG.edf").write_bytes(b"")
    with pytest.raises(AdapterError, match="Hypnogram"):
        sleepedfx.build(Path(tmp_path))
