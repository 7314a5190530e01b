"""The six dataset readers on miniature native-layout copies (tests/runner/benchmark/datasets/fixtures.py):
channels and kinds, rates, lengths, stages epoch by epoch, events; layout errors naming the
path; the staged file read back by mne; the copies themselves deterministic and EEG-like."""
from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from runner.benchmark.datasets.base import STAGES, DatasetError, Recording
from runner.benchmark.datasets.readers import READERS, ds002718, get_reader, isruc
from runner.benchmark.datasets.readers.common import seconds
from tests.runner.benchmark.datasets import fixtures as fx

NAMES = ("hmc", "isruc", "eegmat", "sleepedfx", "eegmmidb", "ds002718")


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """The fixture copy of a dataset, written once per module (read-only use)."""
    made: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in made:
            made[name] = getattr(fx, f"write_{name}")(tmp_path_factory.mktemp(name))
        return made[name]
    return get


def read(name: str, root: Path) -> list[Recording]:
    return get_reader(name).recordings(root)


def editable(copy: Callable[[str], Path], name: str, tmp_path: Path) -> Path:
    """A private copy of a fixture copy, for tests that break its layout."""
    return Path(shutil.copytree(copy(name), tmp_path / name))


def by_key(recordings: list[Recording]) -> dict[str, Recording]:
    return {recording.key: recording for recording in recordings}


def kinds(recording: Recording) -> dict[str, str]:
    return {channel.name: channel.kind for channel in recording.channels}


def staged_raw(recording: Recording, tmp_path: Path):
    """mne's Raw of exactly what would be staged: `content` bytes, else the signal file, under
    a new name with the recording's suffix."""
    import mne

    target = tmp_path / f"staged{recording.suffix}"
    if recording.content is not None:
        target.write_bytes(recording.content())
    else:
        shutil.copyfile(recording.signal, target)
    return mne.io.read_raw(target, preload=True, verbose="error")


# ------------------------------------------------------------------ every reader
def test_the_registry_names_the_six_readers_and_each_documents_its_source():
    assert set(READERS.names()) == set(NAMES)
    for name in NAMES:
        doc = get_reader(name).__doc__ or ""
        assert "Native layout" in doc and "https://" in doc and "Licence" in doc, name
        assert get_reader(name).TITLE, name


@pytest.mark.parametrize("name", NAMES)
def test_recordings_are_sorted_and_read_the_same_twice(name, copy):
    first, second = read(name, copy(name)), read(name, copy(name))
    assert [r.key for r in first] == sorted(r.key for r in first) and len(first) >= 2
    assert first == second
    for recording in first:
        assert recording.dataset == name and recording.key in recording.description
        assert recording.sfreq > 0 and recording.duration_s > 0 and recording.channels
        assert recording.stages is None or set(recording.stages) <= {*STAGES, "?"}


@pytest.mark.parametrize("name", NAMES)
def test_an_empty_folder_is_named_in_the_error(name, tmp_path):
    with pytest.raises(DatasetError, match=re.escape(str(tmp_path))):
        read(name, tmp_path)


@pytest.mark.parametrize("name", NAMES)
def test_the_staged_file_reads_in_mne_with_the_reported_channels(name, copy, tmp_path):
    recording = read(name, copy(name))[0]
    raw = staged_raw(recording, tmp_path)
    assert raw.ch_names == [channel.name for channel in recording.channels]
    assert raw.info["sfreq"] == recording.sfreq
    assert raw.n_times / raw.info["sfreq"] == pytest.approx(recording.duration_s)


@pytest.mark.parametrize("name", NAMES)
def test_a_fixture_written_twice_is_byte_identical(name, copy, tmp_path):
    again = getattr(fx, f"write_{name}")(tmp_path / name)
    first = {p.relative_to(copy(name)): p.read_bytes() for p in sorted(copy(name).rglob("*")) if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in sorted(again.rglob("*")) if p.is_file()}
    assert first.keys() == second.keys() and first == second


# ------------------------------------------------------------------ HMC
def test_hmc_channels_rate_stages_and_lights(copy):
    recordings = by_key(read("hmc", copy("hmc")))
    assert list(recordings) == ["SN001", "SN002"]
    sn001 = recordings["SN001"]
    assert kinds(sn001) == {"EEG F4-M1": "eeg", "EEG C4-M1": "eeg", "EEG O2-M1": "eeg", "EEG C3-M2": "eeg",
                            "EMG chin": "emg", "EOG E1-M2": "eog", "EOG E2-M2": "eog", "ECG": "ecg"}
    assert (sn001.sfreq, sn001.duration_s, sn001.suffix) == (256.0, 1500.0, ".edf")
    assert sn001.stages == fx.HMC_STAGES["SN001"] and sn001.stages[0] == "?"
    assert set(sn001.stages) == {"?", *STAGES}
    assert recordings["SN002"].stages == fx.HMC_STAGES["SN002"]
    assert sn001.events == {"Lights off": (42.5,), "Lights on": (1455.0,)}
    assert [p.name for p in sn001.companions] == ["SN001_sleepscoring.edf"]
    assert "8 channels: 4 EEG, 2 EOG, 1 EMG, 1 ECG; 256 Hz; 1,500 s" in sn001.description


def test_hmc_reads_the_txt_scoring_when_the_edf_one_is_absent(copy, tmp_path):
    root = editable(copy, "hmc", tmp_path)
    (root / "recordings" / "SN001_sleepscoring.edf").unlink()
    sn001 = by_key(read("hmc", root))["SN001"]
    assert sn001.stages == fx.HMC_STAGES["SN001"]
    assert sn001.events == {"Lights off": (42.5,), "Lights on": (1455.0,)}
    assert [p.name for p in sn001.companions] == ["SN001_sleepscoring.txt"]


def test_hmc_scoring_onsets_count_from_the_psg_start(copy, tmp_path):
    """A scoring file starting a minute after its PSG: its onsets count from its own start."""
    import datetime as dt

    root = editable(copy, "hmc", tmp_path)
    later = [(onset - 60, duration, text) for onset, duration, text in fx.hmc_annotations(fx.HMC_STAGES["SN002"])
             if onset >= 60]
    fx.write_annotation_edf(root / "recordings" / "SN002_sleepscoring.edf", later,
                            fx.HMC_START + dt.timedelta(seconds=60))
    # the first two epochs, before the scoring file starts, are unscored; the rest line up
    assert by_key(read("hmc", root))["SN002"].stages == ("?", "?", *fx.HMC_STAGES["SN002"][2:])


def test_hmc_psg_without_scoring_is_named(copy, tmp_path):
    root = editable(copy, "hmc", tmp_path)
    for suffix in (".edf", ".txt"):
        (root / "recordings" / f"SN002_sleepscoring{suffix}").unlink()
    with pytest.raises(DatasetError, match=r"SN002\.edf: no SN002_sleepscoring\.edf"):
        read("hmc", root)


def test_hmc_malformed_scoring_line_names_file_and_line(copy, tmp_path):
    root = editable(copy, "hmc", tmp_path)
    (root / "recordings" / "SN001_sleepscoring.edf").unlink()
    txt = root / "recordings" / "SN001_sleepscoring.txt"
    lines = txt.read_text().splitlines()
    lines[4] = "2018-03-01, 23:12:00, two minutes, 30, Sleep stage W, "
    txt.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=re.escape(f"{txt}:5: expected")):
        read("hmc", root)


def test_hmc_signals_look_like_sleep(copy):
    """Slow waves dominate N3, alpha is occipital in wake, chin tone is lowest in REM."""
    import mne

    recording = by_key(read("hmc", copy("hmc")))["SN001"]
    raw = mne.io.read_raw_edf(recording.signal, preload=True, verbose="error")
    epochs = np.array(recording.stages)

    def power(channel: str, stage: str, low: float, high: float) -> float:
        data = raw.get_data(picks=[channel], units="uV")[0].reshape(len(epochs), -1)[epochs == stage]
        spectrum = np.abs(np.fft.rfft(data, axis=1)) ** 2
        freqs = np.fft.rfftfreq(data.shape[1], 1 / raw.info["sfreq"])
        return float(spectrum[:, (freqs >= low) & (freqs < high)].mean())

    assert power("EEG C4-M1", "N3", 0.5, 2) > 10 * power("EEG C4-M1", "W", 0.5, 2)
    assert power("EEG O2-M1", "W", 8, 12) > 2 * power("EEG F4-M1", "W", 8, 12)
    assert power("EMG chin", "W", 20, 100) > 10 * power("EMG chin", "REM", 20, 100)
    eeg_sd = raw.get_data(picks=["EEG C4-M1"], units="uV").std()
    assert 10 < eeg_sd < 100


# ------------------------------------------------------------------ ISRUC
def test_isruc_keys_kinds_and_scorer_one_stages(copy):
    recordings = by_key(read("isruc", copy("isruc")))
    assert list(recordings) == ["subgroupI/1", "subgroupII/1/1", "subgroupII/1/2"]
    first = recordings["subgroupI/1"]
    assert (first.subject, first.sfreq, first.duration_s, first.suffix) == ("subgroupI/1", 200.0, 1080.0, ".edf")
    assert first.signal.name == "1.rec" and [p.name for p in first.companions] == ["1_1.txt"]
    assert {name: kind for name, kind in kinds(first).items() if kind != "misc"} == {
        "LOC-A2": "eog", "ROC-A1": "eog", "F3-A2": "eeg", "C3-A2": "eeg", "O1-A2": "eeg", "F4-A1": "eeg",
        "C4-A1": "eeg", "O2-A1": "eeg", "X1": "emg", "X2": "ecg"}
    assert {"X3", "X4", "SaO2", "DC3"} <= {name for name, kind in kinds(first).items() if kind == "misc"}
    later = recordings["subgroupII/1/2"]
    assert later.subject == "subgroupII/1" and later.of_kind("eog") == ["E1-M2", "E2-M1"]
    assert later.of_kind("eeg") == ["F3-M2", "C3-M2", "O1-M2", "F4-M1", "C4-M1", "O2-M1"]
    # the hypnogram two epochs short of the EDF: stages stop with it; two long: cut to the EDF
    assert first.stages == fx.ISRUC["subgroupI/1/1"][1] and len(first.stages) == 34
    assert recordings["subgroupII/1/1"].stages == fx.ISRUC["subgroupII/1/1/1"][1][:12]
    scorer2 = (copy("isruc") / "subgroupI" / "1" / "1_2.txt").read_text().split()
    assert [fx.ISRUC_CODES[s] for s in first.stages] != [int(code) for code in scorer2]
    assert "'X1' is the chin EMG and 'X2' the ECG" in first.description
    assert isruc.kind_of("ROC-A1") == "eog" and isruc.kind_of("Fp1-M2") == "eeg" and isruc.kind_of("A1") == "misc"


def test_isruc_subgroup_folders_may_be_numbered(copy, tmp_path):
    root = editable(copy, "isruc", tmp_path)
    (root / "subgroupI").rename(root / "SubGroup1")
    assert [r.key for r in read("isruc", root)][0] == "subgroupI/1"


def test_isruc_layout_errors_name_the_file(copy, tmp_path):
    root = editable(copy, "isruc", tmp_path)
    hypnogram = root / "subgroupII" / "1" / "2" / "2_1.txt"
    codes = hypnogram.read_text().splitlines()
    hypnogram.write_text("\n".join([*codes[:2], "4", *codes[3:]]) + "\n")
    with pytest.raises(DatasetError, match=re.escape(f"{hypnogram}:3: expected one stage code")):
        read("isruc", root)
    hypnogram.unlink()
    with pytest.raises(DatasetError, match=r"2\.rec: no scorer-1 hypnogram 2_1\.txt"):
        read("isruc", root)


def test_isruc_without_subgroup_folders_names_the_root(tmp_path):
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "1.rec").write_bytes(b"0")
    with pytest.raises(DatasetError, match=re.escape(f"{tmp_path}: no subgroupI/")):
        read("isruc", tmp_path)


# ------------------------------------------------------------------ Sleep-EDF Expanded
def test_sleepedfx_mixed_rates_and_the_t6_labels(copy):
    recordings = by_key(read("sleepedfx", copy("sleepedfx")))
    assert list(recordings) == ["SC4001E0", "ST7011J0"]
    cassette = recordings["SC4001E0"]
    assert kinds(cassette) == {"EEG Fpz-Cz": "eeg", "EEG Pz-Oz": "eeg", "EOG horizontal": "eog",
                               "Resp oro-nasal": "misc", "EMG submental": "emg", "Temp rectal": "misc",
                               "Event marker": "misc"}
    assert (cassette.sfreq, cassette.duration_s, cassette.subject) == (100.0, 1440.0, "SC400")
    assert "EMG submental, Temp rectal, Event marker at 1 Hz" in cassette.description
    t6 = {"N4": "N3", "MT": "W", "?": "W"}  # the T6 adapter's epoch_labels, reused unchanged
    assert cassette.stages == tuple(t6.get(s, s) for s in fx.SLEEPEDF_STAGES["SC4001E"])
    telemetry = recordings["ST7011J0"]
    assert telemetry.stages == fx.SLEEPEDF_STAGES["ST7011J"] and telemetry.sfreq == 100.0
    assert telemetry.signal.parent.name == "sleep-telemetry"
    assert [p.name for p in telemetry.companions] == ["ST7011JP-Hypnogram.edf"]


def test_sleepedfx_psg_without_hypnogram_and_broken_hypnogram_are_named(copy, tmp_path):
    root = editable(copy, "sleepedfx", tmp_path)
    hypnogram = root / "sleep-cassette" / "SC4001EC-Hypnogram.edf"
    hypnogram.write_bytes(b"not an EDF at all")
    with pytest.raises(DatasetError, match=re.escape(str(hypnogram))):
        read("sleepedfx", root)
    hypnogram.unlink()
    with pytest.raises(DatasetError, match=r"SC4001E0-PSG\.edf: no SC4001E\?-Hypnogram\.edf"):
        read("sleepedfx", root)


# ------------------------------------------------------------------ EEGMAT
def test_eegmat_channels_and_condition_events(copy):
    recordings = by_key(read("eegmat", copy("eegmat")))
    assert list(recordings) == ["Subject00_1", "Subject00_2", "Subject01_2"]
    rest = recordings["Subject00_1"]
    assert [c.name for c in rest.channels] == fx.EEGMAT_CHANNELS
    assert rest.of_kind("ecg") == ["ECG ECG"] and rest.of_kind("misc") == ["EEG A2-A1"]
    assert len(rest.of_kind("eeg")) == 19
    assert (rest.sfreq, rest.duration_s, rest.subject) == (500.0, 120.0, "Subject00")
    assert rest.events == {"rest": (0.0,)}
    assert recordings["Subject01_2"].events == {"arithmetic": (0.0,)}
    # the condition may be a task's answer: the phrase differs only by key and length
    def neutral(recording: Recording) -> str:
        return recording.description.replace(recording.key, "KEY").replace(f"{seconds(recording.duration_s)} s", "T s")
    assert neutral(rest) == neutral(recordings["Subject00_2"]) == neutral(recordings["Subject01_2"])


def test_eegmat_truncated_edf_is_named(copy, tmp_path):
    root = editable(copy, "eegmat", tmp_path)
    broken = root / "Subject00_2.edf"
    broken.write_bytes(broken.read_bytes()[:100])
    with pytest.raises(DatasetError, match=re.escape(str(broken))):
        read("eegmat", root)


def test_eegmat_alpha_drops_during_arithmetic(copy):
    import mne

    recordings = by_key(read("eegmat", copy("eegmat")))

    def alpha(key: str) -> float:
        raw = mne.io.read_raw_edf(recordings[key].signal, preload=True, verbose="error")
        data = raw.get_data(picks=["EEG O1"], units="uV")[0]
        spectrum, freqs = np.abs(np.fft.rfft(data)) ** 2, np.fft.rfftfreq(data.size, 1 / 500)
        return float(spectrum[(freqs >= 8) & (freqs < 12)].sum() / spectrum[freqs >= 1].sum())

    assert alpha("Subject00_1") > 1.5 * alpha("Subject00_2")


# ------------------------------------------------------------------ EEGMMIDB
def test_eegmmidb_dot_padded_channels_and_t_events(copy):
    recordings = by_key(read("eegmmidb", copy("eegmmidb")))
    assert list(recordings) == ["S001R01", "S001R02", "S001R04"]
    imagery = recordings["S001R04"]
    assert [c.name for c in imagery.channels] == fx.EEGMMIDB_CHANNELS and imagery.of_kind("eeg") == fx.EEGMMIDB_CHANNELS
    assert (imagery.sfreq, imagery.duration_s, imagery.subject) == (160.0, 120.0, "S001")
    expected: dict[str, list[float]] = {}
    for onset, _, text in fx.eegmmidb_annotations("S001R04", 120):
        expected.setdefault(text, []).append(onset)
    assert set(imagery.events) == {"T0", "T1", "T2"}
    for kind, onsets in expected.items():
        assert imagery.events[kind] == pytest.approx(onsets, abs=1e-6)
    assert recordings["S001R02"].events == {"T0": (0.0,)}
    assert "run 2: resting baseline with the eyes closed" in recordings["S001R02"].description
    assert "run 4: imagining opening and closing the left or right fist" in imagery.description
    assert "padded with dots" in imagery.description


def test_eegmmidb_reads_without_the_files_folder(copy, tmp_path):
    shutil.copytree(copy("eegmmidb") / "files" / "S001", tmp_path / "S001")
    assert [r.key for r in read("eegmmidb", tmp_path)] == ["S001R01", "S001R02", "S001R04"]


# ------------------------------------------------------------------ ds002718 (BIDS)
def test_ds002718_channels_from_the_tsv_and_events_by_trial_type(copy):
    recordings = by_key(read("ds002718", copy("ds002718")))
    assert list(recordings) == ["sub-002_task-FaceRecognition", "sub-003_task-FaceRecognition"]
    recording = recordings["sub-002_task-FaceRecognition"]
    assert [c.name for c in recording.channels] == fx.DS_CHANNELS
    assert recording.of_kind("eog") == ["EEG061", "EEG062"] and recording.of_kind("ecg") == ["EEG063"]
    assert recording.of_kind("misc") == ["EEG064"] and len(recording.of_kind("eeg")) == 70
    assert (recording.sfreq, recording.duration_s, recording.subject) == (250.0, 60.0, "sub-002")
    assert (recording.signal.suffix, recording.suffix) == (".set", ".edf")
    assert recording.events_tsv is not None and recording.events_tsv.name == "sub-002_task-FaceRecognition_events.tsv"
    expected: dict[str, list[float]] = {}
    for sample, kind, _ in fx.ds_events("sub-002"):
        expected.setdefault(kind, []).append(sample / fx.DS_SFREQ)
    assert set(recording.events) == set(expected)
    for kind, onsets in expected.items():
        assert recording.events[kind] == pytest.approx(onsets, abs=1e-3)
    assert "Face processing EEG dataset for EEGLAB" in recording.description


def test_ds002718_content_is_deterministic_edf_of_the_same_data(copy, tmp_path):
    import mne

    recording = read("ds002718", copy("ds002718"))[0]
    assert recording.content is not None
    payload = recording.content()
    assert payload[:8] == b"0       " and payload == recording.content()
    staged = staged_raw(recording, tmp_path)
    original = mne.io.read_raw_eeglab(recording.signal, preload=True, verbose="error")
    assert staged.ch_names == original.ch_names and staged.info["sfreq"] == original.info["sfreq"]
    ours, theirs = staged.get_data(), original.get_data()
    assert ours.shape == theirs.shape
    for kind in ("eeg", "eog", "ecg", "misc"):  # mne's export quantises each type's range to 16 bits
        rows = [i for i, t in enumerate(original.get_channel_types()) if t == kind]
        step = (theirs[rows].max() - theirs[rows].min()) / (2 ** 16 - 1)
        assert np.abs(ours[rows] - theirs[rows]).max() <= step, kind


def test_ds002718_sidecars_are_inherited_from_parent_folders(copy, tmp_path):
    root = editable(copy, "ds002718", tmp_path)
    for subject in fx.DS_SUBJECTS:
        (root / subject / "eeg" / f"{subject}_task-FaceRecognition_channels.tsv").unlink()
    fx.write_tsv(root / "task-FaceRecognition_channels.tsv", ["name", "type"],
                 [[name, "EOG" if name == "EEG001" else "EEG"] for name in fx.DS_CHANNELS])
    recording = read("ds002718", root)[0]
    assert recording.of_kind("eog") == ["EEG001"]
    assert ds002718.entities("sub-002_ses-01_task-X_run-2_eeg.set") == {
        "sub": "002", "ses": "01", "task": "X", "run": "2"}


def test_ds002718_bids_edf_is_staged_as_it_is(copy, tmp_path):
    root = editable(copy, "ds002718", tmp_path)
    folder = root / "sub-002" / "eeg"
    recording = read("ds002718", root)[0]
    assert recording.content is not None
    (folder / "sub-002_task-FaceRecognition_eeg.edf").write_bytes(recording.content())
    for suffix in (".set", ".fdt"):
        (folder / f"sub-002_task-FaceRecognition_eeg{suffix}").unlink()
    edf = read("ds002718", root)[0]
    assert (edf.signal.suffix, edf.suffix, edf.content) == (".edf", ".edf", None)
    assert edf.of_kind("ecg") == ["EEG063"] and edf.sfreq == 250.0


def test_ds002718_layout_errors_name_the_file(copy, tmp_path):
    root = editable(copy, "ds002718", tmp_path)
    events = root / "sub-003" / "eeg" / "sub-003_task-FaceRecognition_events.tsv"
    lines = events.read_text().splitlines()
    lines[2] = "soon\t" + lines[2].split("\t", 1)[1]
    events.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=re.escape(f"{events}:3: expected a number")):
        read("ds002718", root)
    fdt = root / "sub-002" / "eeg" / "sub-002_task-FaceRecognition_eeg.fdt"
    fdt.unlink()
    with pytest.raises(DatasetError, match=r"sub-002_task-FaceRecognition_eeg\.set: mne cannot read"):
        read("ds002718", root)
