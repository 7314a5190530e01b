import datetime as dt

import mne
import numpy as np
import pytest

from runner.benchmark.agentbench.edf import EdfError, cut_records, read_header
from tests.fixtures.datasets import _write_edf


@pytest.fixture
def psg(tmp_path):
    path = tmp_path / "x-PSG.edf"
    _write_edf(path, ["EEG Fpz-Cz", "EOG"], 10, 300, record_s=30,
               start=dt.datetime(1999, 12, 31, 23, 58, 0), seed=3)
    return path


def test_header(psg):
    header = read_header(psg)
    assert (header.n_records, header.record_duration_s, header.duration_s) == (10, 30.0, 300.0)
    assert header.labels == ("EEG Fpz-Cz", "EOG")
    assert header.start == dt.datetime(1999, 12, 31, 23, 58, 0)
    assert not header.is_edf_plus


def test_cut_is_lossless_and_shifts_the_start_across_midnight(psg, tmp_path):
    header = read_header(psg)
    out = tmp_path / "cut.edf"
    out.write_bytes(cut_records(header, 5, 9))
    cut = read_header(out)
    assert cut.n_records == 4
    assert cut.start == dt.datetime(2000, 1, 1, 0, 0, 30)  # 23:58:00 + 150 s, two-digit year rule
    original = mne.io.read_raw_edf(psg, verbose="ERROR").get_data()
    trimmed = mne.io.read_raw_edf(out, verbose="ERROR").get_data()
    assert np.array_equal(original[:, 1500:2700], trimmed)


def test_bad_ranges_and_files_are_named(psg, tmp_path):
    with pytest.raises(EdfError, match="record range"):
        cut_records(read_header(psg), 3, 11)
    junk = tmp_path / "junk.edf"
    junk.write_bytes(b"not an edf")
    with pytest.raises(EdfError, match="junk.edf"):
        read_header(junk)
