"""The readers on real files of their formats packaged on PyPI (fetched by `make data`):
EEGMMIDB's S001R02.edf under its native name, and pylossless's BIDS EEG folder read by the
BIDS reader that ds002718 uses. Hard links into a native layout (copies across filesystems)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from runner.benchmark.datasets.readers import get_reader

DATA = Path(__file__).resolve().parents[4] / "data"


def _link(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:  # another filesystem
        shutil.copyfile(source, target)


def test_eegmmidb_reads_physionets_own_file(tmp_path):
    _link(DATA / "eegmmidb" / "S001R02.edf", tmp_path / "files" / "S001" / "S001R02.edf")
    (recording,) = get_reader("eegmmidb").recordings(tmp_path)
    assert (recording.key, recording.subject, recording.sfreq) == ("S001R02", "S001", 160.0)
    assert len(recording.of_kind("eeg")) == 64 and "O1.." in recording.of_kind("eeg")
    assert 60.9 <= recording.duration_s <= 61.1
    assert set(recording.events) == {"T0"}  # the eyes-closed baseline has rest only
    assert "eyes closed" in recording.description


def test_the_bids_reader_reads_pylosslesss_face_house_folder(tmp_path):
    for name in ("sub-s01_task-faceO_eeg.edf", "sub-s01_task-faceO_events.tsv"):
        _link(DATA / "pylossless" / name, tmp_path / "sub-s01" / "eeg" / name)
    (recording,) = get_reader("ds002718").recordings(tmp_path)
    assert recording.suffix == ".edf" and recording.content is None  # staged as it is
    assert recording.sfreq == 256.0 and len(recording.of_kind("eeg")) == 128
    assert recording.events_tsv == tmp_path / "sub-s01" / "eeg" / "sub-s01_task-faceO_events.tsv"
    assert len(recording.events["face-upright"]) == 198 and len(recording.events["checker-left"]) == 198
