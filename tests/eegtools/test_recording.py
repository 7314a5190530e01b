"""Loading recordings: formats, the LRU cache, channel and time selection."""
import json
import os

import numpy as np
import pytest

import eegtools
from eegtools import ToolError, cache_info, load_recording
from eegtools.recording import resolve_channels, resolve_span


def test_edf_loads_whole_recording_in_volts(mmidb):
    rec = load_recording(mmidb)
    assert (rec.sfreq, rec.n_samples, len(rec.ch_names)) == (160.0, 9760, 64)
    assert rec.data.dtype == np.float64 and rec.data.flags.c_contiguous and not rec.data.flags.writeable
    assert 1e-6 < np.std(rec.data[0]) < 1e-3  # volts: tens of µV


def test_second_load_is_served_from_the_cache(mmidb):
    first = load_recording(mmidb)
    second = load_recording(mmidb)
    assert second is first
    assert cache_info()["misses"] == 1 and cache_info()["hits"] == 1


def test_changed_file_is_read_again(tmp_path):
    path = tmp_path / "rec.npy"
    np.save(path, np.zeros((1, 100)))
    (tmp_path / "rec.json").write_text(json.dumps({"sfreq": 100}))
    first = load_recording(path)
    np.save(path, np.ones((1, 200)))
    os.utime(path, ns=(1, 10**18))
    second = load_recording(path)
    assert second is not first and second.n_samples == 200


def test_cache_evicts_least_recently_used(tmp_path, monkeypatch):
    monkeypatch.setattr(eegtools.recording._CACHE, "max_items", 1)
    paths = []
    for i in range(2):
        paths.append(tmp_path / f"r{i}.npy")
        np.save(paths[-1], np.zeros((1, 10)))
    a = load_recording(paths[0], sfreq=10)
    load_recording(paths[1], sfreq=10)
    assert cache_info()["recordings"] == 1
    assert load_recording(paths[0], sfreq=10) is not a


def test_npy_with_sidecar_units_and_names(tmp_path):
    path = tmp_path / "sig.npy"
    np.save(path, np.full((2, 50), 5.0))
    (tmp_path / "sig.npy.json").write_text(json.dumps({"sfreq": 50, "ch_names": ["C3", "C4"], "unit": "uV"}))
    rec = load_recording(path)
    assert rec.ch_names == ("C3", "C4") and rec.duration_s == 1.0
    assert rec.data[0, 0] == pytest.approx(5e-6)


def test_npy_without_sampling_rate_is_unsupported(tmp_path):
    path = tmp_path / "sig.npy"
    np.save(path, np.zeros((2, 50)))
    with pytest.raises(ToolError) as err:
        load_recording(path)
    assert err.value.code == "unsupported" and err.value.argument == "record"


def test_unknown_format_and_missing_file(tmp_path):
    (tmp_path / "x.csv").write_text("1,2\n")
    with pytest.raises(ToolError) as err:
        load_recording(tmp_path / "x.csv")
    assert err.value.code == "unsupported"
    with pytest.raises(ToolError) as err:
        load_recording(tmp_path / "absent.edf")
    assert err.value.code == "bad_argument"


def test_channel_names_match_ignoring_case_dots_and_spaces(mmidb):
    rec = load_recording(mmidb)
    assert [rec.ch_names[i] for i in resolve_channels(rec, ["o1", "Oz..", " O2 "])] == ["O1..", "Oz..", "O2.."]
    with pytest.raises(ToolError) as err:
        resolve_channels(rec, ["Q7"])
    assert err.value.code == "unknown_channel" and "Q7" in err.value.message


def test_time_range_checks(mmidb):
    rec = load_recording(mmidb)
    assert resolve_span(rec, 1.0, 2.0) == (160, 320)
    assert resolve_span(rec, None, None) == (0, 9760)
    for start, end, arg in ((-1, 5, "start_s"), (70, None, "start_s"), (0, 62, "end_s"), (5, 5, "end_s")):
        with pytest.raises(ToolError) as err:
            resolve_span(rec, start, end)
        assert err.value.code == "out_of_range" and err.value.argument == arg


def test_fif_loads(data_root):
    rec = load_recording(data_root / "mne_sample" / "test_raw.fif")
    info = eegtools.get_recording_info(rec)
    assert info["n_channels"] == len(rec.ch_names) > 0 and info["sampling_rate_hz"] > 0
    assert "eeg" in info["channel_types"]
