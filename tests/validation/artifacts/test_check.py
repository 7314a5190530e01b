"""file_status_check end to end over real files: npy, FIF and EDF written with numpy/mne,
CSV/TSV tables, PNG/JPEG images from matplotlib; both params spellings; expected values
computed here, never by the code under test."""
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import mne  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from runner.run.artifacts import retain_artifacts  # noqa: E402
from validation.artifacts.check import file_status_check  # noqa: E402
from validation.context import JudgeVerdict, ScoringContext  # noqa: E402
from validation.errors import MetricConfigError  # noqa: E402

DATA = Path(__file__).resolve().parents[3] / "data"
SAMPLE_FIF = DATA / "mne_sample" / "test_raw.fif"
RNG = np.random.default_rng(20261129)


class Workspace:
    """A tmp /workspace: write into .fc, then .context() retains it like a run does."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fc = root / "ws" / "file_check"
        self.fc.mkdir(parents=True)
        self._n = 0

    def path(self, name: str) -> Path:
        target = self.fc / name
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def context(self, **kwargs) -> ScoringContext:
        self._n += 1
        dest = self.root / f"audit{self._n}" / "artifacts"
        return ScoringContext(artifacts_dir=dest, manifest=[e.as_manifest() for e in retain_artifacts(self.root / "ws", dest)],
                              **kwargs)


@pytest.fixture
def ws(tmp_path):
    return Workspace(tmp_path)


def eeg(fields: dict, truth: dict, **extra) -> dict:
    return {"check": "eeg_file_match", "fields": fields, "ground_truth": truth, **extra}


def one(name, value, weight=1.0, tolerance=None):
    cfg = {"weight": weight} if tolerance is None else {"weight": weight, "tolerance": tolerance}
    return eeg({name: cfg}, {name: value})


def run(ws, reported, params, **ctx_kwargs):
    ctx = ws.context(**ctx_kwargs)
    return file_status_check(reported, params, ctx.for_metric("m_art")), ctx


def rms(a) -> float:
    a = np.asarray(a, dtype=np.float64)
    return float(np.sqrt((a * a).sum() / a.size))


# --- npy ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, channels", [((500,), 1), ((4, 500), 4), ((3, 4, 500), 4)])
def test_npy_shapes_channel_count_n_samples(ws, shape, channels):
    data = RNG.standard_normal(shape)
    np.save(ws.path("sig.npy"), data)
    params = eeg({"channel_count": {}, "npy_shape": {}, "n_samples": {}},
                 {"channel_count": channels, "npy_shape": list(shape), "n_samples": shape[-1]})
    outcome, ctx = run(ws, "/workspace/file_check/sig.npy", params)
    assert outcome.score == 1.0, outcome.detail
    measured = {r["field"]: r["measured"] for r in outcome.evidence["fields"]}
    assert measured == {"channel_count": channels, "npy_shape": list(shape), "n_samples": shape[-1]}
    # each wrong by one: all three fail
    wrong = eeg({"channel_count": {}, "npy_shape": {}, "n_samples": {}},
                {"channel_count": channels + 1, "npy_shape": list(shape)[:-1] + [shape[-1] + 1],
                 "n_samples": shape[-1] - 1})
    outcome, _ = run(ws, "file_check/sig.npy", wrong)
    assert outcome.score == 0.0
    assert [r["ok"] for r in outcome.evidence["fields"]] == [False, False, False]


@pytest.mark.parametrize("factor, ok", [
    (1.099, True),   # measured is 9.9% below expected
    (1.101, False),  # 10.1% below
    (0.901, True),   # 9.9% above
    (0.899, False),  # 10.1% above
    (1.0, True),
])
def test_signal_rms_default_relative_ten_percent(ws, factor, ok):
    data = RNG.standard_normal((3, 400)) * 3e-5
    np.save(ws.path("sig.npy"), data)
    expected = rms(data) / factor  # measured = expected * factor
    outcome, _ = run(ws, "file_check/sig.npy", one("signal_rms", expected))
    assert outcome.score == (1.0 if ok else 0.0), outcome.detail


def test_signal_rms_explicit_tolerance_is_absolute(ws):
    data = np.full((2, 100), 2.0)  # rms exactly 2
    np.save(ws.path("sig.npy"), data)
    assert run(ws, "file_check/sig.npy", one("signal_rms", 2.5, tolerance=0.6))[0].score == 1.0
    assert run(ws, "file_check/sig.npy", one("signal_rms", 2.5, tolerance=0.4))[0].score == 0.0
    # 1.9 is within 10% of 2 but the explicit tolerance (0.05) replaces the default
    assert run(ws, "file_check/sig.npy", one("signal_rms", 1.9, tolerance=0.05))[0].score == 0.0


def test_npy_has_no_header_fields(ws):
    np.save(ws.path("sig.npy"), RNG.standard_normal((2, 100)))
    outcome, _ = run(ws, "file_check/sig.npy", one("sfreq_hz", 100.0))
    assert outcome.score == 0.0
    record = outcome.evidence["fields"][0]
    assert record["ok"] is False and record["measured"] is None and "note" in record


def test_npy_reference_mode(ws):
    data = RNG.standard_normal((5, 300))
    np.save(ws.path("raw.npy"), data)
    np.save(ws.path("car.npy"), data - data.mean(axis=0, keepdims=True))
    assert run(ws, "file_check/car.npy", one("reference_mode", "average"))[0].score == 1.0
    assert run(ws, "file_check/raw.npy", one("reference_mode", "average"))[0].score == 0.0


def test_weighted_partial_score_is_the_exact_fraction(ws):
    np.save(ws.path("sig.npy"), RNG.standard_normal((4, 250)))
    params = eeg({"channel_count": {"weight": 1}, "npy_shape": {"weight": 2}, "n_samples": {"weight": 4}},
                 {"channel_count": 4, "npy_shape": [4, 999], "n_samples": 250})
    outcome, _ = run(ws, "file_check/sig.npy", params)
    assert outcome.score == pytest.approx(5 / 7, abs=1e-6)
    params = eeg({"channel_count": {"weight": 0.25}, "npy_shape": {"weight": 0.5}, "n_samples": {"weight": 0.25}},
                 {"channel_count": 4, "npy_shape": [4, 250], "n_samples": 1})
    assert run(ws, "file_check/sig.npy", params)[0].score == pytest.approx(0.75, abs=1e-6)


def test_valid_file_with_no_fields_scores_one_garbage_zero(ws):
    np.save(ws.path("sig.npy"), RNG.standard_normal((2, 10)))
    ws.path("bad.npy").write_bytes(b"this is not an npy file at all")
    assert run(ws, "file_check/sig.npy", {"check": "eeg_file_match"})[0].score == 1.0
    assert run(ws, "file_check/bad.npy", {"check": "eeg_file_match"})[0].score == 0.0


@pytest.mark.parametrize("name, content", [
    ("bad.npy", b"\x93NUMPY garbage"),
    ("bad.fif", b"not a fif file, just text\n" * 10),
    ("bad.edf", b"0       garbage header" + b" " * 300),
    ("bad.cnt", b"\x00" * 64),
])
def test_unreadable_signal_file_scores_zero(ws, name, content):
    ws.path(name).write_bytes(content)
    outcome, ctx = run(ws, f"file_check/{name}", one("channel_count", 4))
    assert outcome.score == 0.0 and outcome.scored
    assert ctx.violations == []


def test_non_numeric_or_pickled_npy_scores_zero(ws):
    np.save(ws.path("obj.npy"), np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    np.save(ws.path("str.npy"), np.array(["a", "b"]))
    np.save(ws.path("4d.npy"), np.zeros((2, 2, 2, 2)))
    for name in ("obj.npy", "str.npy", "4d.npy"):
        assert run(ws, f"file_check/{name}", one("channel_count", 2))[0].score == 0.0, name


def test_complex_npy_with_signal_rms_scores_zero_instead_of_raising(ws):
    """A model may save an FFT (complex) array: a numeric npy the RMS cannot be squared as
    float64. That is the model's wrong file (score 0), not a scoring crash."""
    np.save(ws.path("fft.npy"), np.fft.rfft(RNG.standard_normal((2, 64))))
    outcome, _ = run(ws, "file_check/fft.npy", one("signal_rms", 1.0))
    assert outcome.score == 0.0


@pytest.mark.parametrize("name", ["sig.txt", "sig.mat", "sig", "sig.npz", "sig.csv"])
def test_unsupported_extension_scores_zero(ws, name):
    np.save(ws.path("tmp.npy"), np.ones((2, 10)))
    ws.path(name).write_bytes(ws.path("tmp.npy").read_bytes())  # valid npy bytes, wrong name
    outcome, _ = run(ws, f"file_check/{name}", one("channel_count", 2))
    assert outcome.score == 0.0


def test_empty_file_scores_zero(ws):
    ws.path("empty.npy").write_bytes(b"")
    outcome, _ = run(ws, "file_check/empty.npy", {"check": "file_exists"})
    assert outcome.score == 0.0


# --- FIF and EDF ------------------------------------------------------------------------------

def synthetic_raw(n_ch=6, sfreq=250.0, seconds=4, reference=False, band=(1.0, 40.0)):
    names = [f"EEG{i:02d}" for i in range(n_ch)]
    info = mne.create_info(names, sfreq, "eeg")
    raw = mne.io.RawArray(RNG.standard_normal((n_ch, int(sfreq * seconds))) * 2e-5, info, verbose="ERROR")
    if band:
        raw.filter(band[0], band[1], verbose="ERROR")
    if reference:
        raw.set_eeg_reference("average", projection=False, verbose="ERROR")
    return raw


def all_fields(raw, names=None):
    """Header fields as mne itself reports them (bandpass_hz has its own tests below)."""
    n = raw.n_times
    sfreq = raw.info["sfreq"]
    return {
        "channel_count": len(raw.ch_names),
        "channel_names": list(names or raw.ch_names),
        "sfreq_hz": sfreq,
        "n_samples": n,
        "duration_sec": n / sfreq,
    }


@pytest.fixture(scope="module")
def sample_eeg_pick():
    raw = mne.io.read_raw_fif(SAMPLE_FIF, preload=True, verbose="ERROR")
    eeg_idx = mne.pick_types(raw.info, meg=False, eeg=True)[:7]
    names = [raw.ch_names[i] for i in eeg_idx]
    raw.pick(names).crop(0.0, 2.0)
    return raw, names


def test_fif_from_sample_recording_all_header_fields(ws, sample_eeg_pick):
    raw, names = sample_eeg_pick
    raw.save(ws.path("picked_raw.fif"), verbose="ERROR")
    truth = all_fields(raw, names)
    assert truth["channel_count"] == 7 and truth["sfreq_hz"] != int(truth["sfreq_hz"])
    params = eeg({k: {"weight": 1} for k in truth}, truth)
    outcome, _ = run(ws, "/workspace/file_check/picked_raw.fif", params)
    assert outcome.score == 1.0, outcome.detail
    measured = {r["field"]: r["measured"] for r in outcome.evidence["fields"]}
    assert measured["channel_names"] == names
    assert measured["n_samples"] == raw.n_times


def test_fif_wrong_channel_set_and_rate(ws, sample_eeg_pick):
    raw, names = sample_eeg_pick
    raw.save(ws.path("picked_raw.fif"), verbose="ERROR")
    truth = all_fields(raw, names)
    truth["channel_names"] = names[:-1] + ["EEG 999"]
    truth["sfreq_hz"] = 600.0
    params = eeg({k: {"weight": 1} for k in truth}, truth)
    outcome, _ = run(ws, "file_check/picked_raw.fif", params)
    assert outcome.score == pytest.approx(3 / 5, abs=1e-6)
    failed = sorted(r["field"] for r in outcome.evidence["fields"] if not r["ok"])
    assert failed == ["channel_names", "sfreq_hz"]


@pytest.mark.parametrize("ext", [".fif", ".edf"])
def test_written_recording_fields(ws, ext):
    raw = synthetic_raw(n_ch=5, sfreq=250.0, seconds=4)
    target = ws.path("clean" + ext)
    if ext == ".fif":
        raw.save(target, verbose="ERROR")
    else:
        mne.export.export_raw(target, raw, verbose="ERROR")
    truth = {"channel_count": 5, "channel_names": [f"EEG{i:02d}" for i in range(5)], "sfreq_hz": 250.0,
             "n_samples": 1000, "duration_sec": 4.0, "bandpass_hz": [1.0, 40.0]}
    outcome, _ = run(ws, f"file_check/clean{ext}", eeg({k: {} for k in truth}, truth))
    assert outcome.score == 1.0, outcome.detail
    wrong = dict(truth, duration_sec=4.004, bandpass_hz=[0.5, 40.0])
    outcome, _ = run(ws, f"file_check/clean{ext}", eeg({k: {} for k in wrong}, wrong))
    assert outcome.score == pytest.approx(4 / 6, abs=1e-6)


@pytest.mark.parametrize("ext", [".fif", ".edf"])
def test_reference_mode_average_vs_not(ws, ext):
    for name, referenced in (("car", True), ("orig", False)):
        raw = synthetic_raw(reference=referenced)
        target = ws.path(name + ext)
        if ext == ".fif":
            raw.save(target, verbose="ERROR")
        else:
            mne.export.export_raw(target, raw, verbose="ERROR")
        data = raw.get_data()
        independent = rms(data.mean(axis=0)) / rms(data)
        assert (independent <= 1e-3) == referenced
    assert run(ws, f"file_check/car{ext}", one("reference_mode", "average"))[0].score == 1.0
    assert run(ws, f"file_check/orig{ext}", one("reference_mode", "average"))[0].score == 0.0


def test_bandpass_of_a_fif_filtered_at_0_1_hz_matches_0_1(ws):
    """FIF stores highpass/lowpass as float32: a recording filtered 0.1-40 Hz reads back
    highpass 0.10000000149. A task's ground truth [0.1, 40.0] (or mne's own reading of the
    file) must match it: the measured value is rounded to 9 decimals but the expected one is
    not, and a list without a tolerance is compared exactly."""
    raw = synthetic_raw(band=(0.1, 40.0))
    raw.save(ws.path("hp_raw.fif"), verbose="ERROR")
    back = mne.io.read_raw_fif(ws.path("hp_raw.fif"), verbose="ERROR").info
    assert abs(back["highpass"] - 0.1) < 1e-8  # the file does say 0.1 Hz
    assert run(ws, "file_check/hp_raw.fif", one("bandpass_hz", [0.1, 40.0]))[0].score == 1.0
    as_mne_reads_it = [back["highpass"], back["lowpass"]]
    assert run(ws, "file_check/hp_raw.fif", one("bandpass_hz", as_mne_reads_it))[0].score == 1.0


def test_average_reference_with_an_eog_channel_kept(ws):
    """mne's set_eeg_reference re-references the EEG channels only; a file that keeps its EOG
    channel next to average-referenced EEG is still average-referenced EEG. The measure
    averages over every channel, EOG included, and answers 'other'."""
    raw = mne.io.read_raw_fif(SAMPLE_FIF, preload=True, verbose="ERROR")
    good_eeg = [n for i, n in enumerate(raw.ch_names)
                if i in set(mne.pick_types(raw.info, eeg=True, exclude="bads"))][:8]
    eog = [raw.ch_names[i] for i in mne.pick_types(raw.info, meg=False, eog=True)]
    raw.pick(good_eeg + eog).crop(0.0, 2.0)
    raw.set_eeg_reference("average", projection=False, verbose="ERROR")
    raw.save(ws.path("car_raw.fif"), verbose="ERROR")
    data = raw.get_data(picks=good_eeg)
    assert rms(data.mean(axis=0)) / rms(data) < 1e-6  # the EEG is average-referenced
    assert run(ws, "file_check/car_raw.fif", one("reference_mode", "average"))[0].score == 1.0


def test_gzipped_fif(ws):
    raw = synthetic_raw(n_ch=3, sfreq=100.0, seconds=3)
    raw.save(ws.path("small_raw.fif.gz"), verbose="ERROR")
    params = eeg({"channel_count": {}, "n_samples": {}, "sfreq_hz": {}},
                 {"channel_count": 3, "n_samples": 300, "sfreq_hz": 100.0})
    assert run(ws, "file_check/small_raw.fif.gz", params)[0].score == 1.0


def test_fif_signal_rms_matches_numpy(ws):
    raw = synthetic_raw(band=None)
    raw.save(ws.path("r_raw.fif"), verbose="ERROR")
    expected = rms(raw.get_data())
    assert run(ws, "file_check/r_raw.fif", one("signal_rms", expected * 1.05))[0].score == 1.0
    assert run(ws, "file_check/r_raw.fif", one("signal_rms", expected * 1.2))[0].score == 0.0


# --- tolerance semantics -----------------------------------------------------------------------

def test_tolerance_semantics(ws):
    raw = synthetic_raw(n_ch=3, sfreq=200.0, seconds=5)
    raw.save(ws.path("t_raw.fif"), verbose="ERROR")
    cases = [
        (one("duration_sec", 5.0), 1.0),
        (one("duration_sec", 5.0 + 1e-3), 0.0),  # default 1e-6
        (one("duration_sec", 5.4, tolerance=0.5), 1.0),
        (one("duration_sec", 5.6, tolerance=0.5), 0.0),
        (one("sfreq_hz", 200), 1.0),  # an integer expected compares as an integer
        (one("sfreq_hz", 201), 0.0),
        (one("n_samples", 1000), 1.0),
        (one("n_samples", 1003, tolerance=5), 1.0),  # integer with a tolerance: within
        (one("n_samples", 1006, tolerance=5), 0.0),
        (one("channel_count", 3.0), 1.0),  # float expected, no default tolerance: exact
        (one("bandpass_hz", [1, 40]), 1.0),
        (one("bandpass_hz", [1.05, 39.9], tolerance=0.2), 1.0),
        (one("bandpass_hz", [1.5, 40.0], tolerance=0.2), 0.0),
        (one("bandpass_hz", [1.0]), 0.0),  # length differs
        (one("channel_names", ["EEG00", "EEG01"]), 0.0),
        (one("no_such_field", 1), 0.0),
    ]
    for params, expected in cases:
        outcome, _ = run(ws, "file_check/t_raw.fif", params)
        assert outcome.score == expected, (params, outcome.evidence)


# --- params spellings ----------------------------------------------------------------------------

def brainbench(config: dict, mode="eeg_file_match") -> dict:
    return {"match_mode": mode, "validator_config": config}


def test_both_params_spellings_score_the_same(ws):
    np.save(ws.path("epochs.npy"), RNG.standard_normal((10, 8, 128)))
    ours = eeg({"channel_count": {"weight": 3}, "npy_shape": {"weight": 1}, "n_samples": {"weight": 1}},
               {"channel_count": 8, "npy_shape": [10, 8, 127], "n_samples": 128},
               file_name="epochs.npy")
    theirs = brainbench({
        "file_name": {"value": "epochs.npy"},
        "channel_count": {"weight": 3, "value": 8},
        "npy_shape": {"weight": 1, "value": [10, 8, 127]},
        "n_samples": {"weight": 1, "value": 128},
        "vlm_prompt": {"weight": 0, "value": "ignored"},
        "signal_rms": {"weight": 0, "value": 123.0},  # weight 0: not scored at all
    }, mode="EEG_FILE_MATCH")
    a, _ = run(ws, "file_check/epochs.npy", ours)
    b, _ = run(ws, "file_check/epochs.npy", theirs)
    assert a.score == pytest.approx(4 / 5, abs=1e-6)
    assert b.score == a.score
    assert [r["field"] for r in b.evidence["fields"]] == ["channel_count", "npy_shape", "n_samples"]


def test_brainbench_tolerance_and_file_name(ws):
    np.save(ws.path("out/sig.npy"), np.full((2, 50), 3.0))
    params = brainbench({"file_name": {"value": "sig.npy"},
                         "signal_rms": {"weight": 1, "value": 3.2, "tolerance": 0.25}})
    assert run(ws, "file_check/out/sig.npy", params)[0].score == 1.0
    params["validator_config"]["signal_rms"]["tolerance"] = 0.1
    assert run(ws, "file_check/out/sig.npy", params)[0].score == 0.0
    params["validator_config"]["file_name"]["value"] = "other.npy"
    outcome, ctx = run(ws, "file_check/out/sig.npy", params)
    assert outcome.score == 0.0 and ctx.violations == []


# --- file_name rules -----------------------------------------------------------------------------

@pytest.mark.parametrize("file_name, reported, ok", [
    ("clean.npy", "file_check/clean.npy", True),
    ("clean.npy", "file_check/sub/clean.npy", True),  # bare name: the basename
    ("clean.npy", "file_check/other.npy", False),
    ("clean.npy", "file_check/clean.npy.bak", False),
    ("sub/clean.npy", "file_check/sub/clean.npy", True),
    ("sub/clean.npy", "file_check/clean.npy", False),  # with a folder: the exact path
    ("sub/clean.npy", "file_check/other/clean.npy", False),
    ("file_check/sub/clean.npy", "/workspace/file_check/sub/clean.npy", True),
    ("file_check/clean.npy", "file_check/clean.npy", True),
    ("file_check/clean.npy", "file_check/sub/clean.npy", False),  # folder given: exact path
])
def test_file_name_rules(ws, file_name, reported, ok):
    for rel in ("clean.npy", "other.npy", "clean.npy.bak", "sub/clean.npy", "other/clean.npy"):
        np.save(ws.path(rel), np.ones((2, 4))) if rel.endswith(".npy") else ws.path(rel).write_bytes(b"x")
    outcome, ctx = run(ws, reported, {"check": "file_exists", "file_name": file_name})
    assert outcome.score == (1.0 if ok else 0.0), outcome.detail
    assert ctx.violations == []


def test_brainbench_file_name_as_plain_string_is_checked(ws):
    np.save(ws.path("sig.npy"), np.ones((2, 4)))
    params = brainbench({"file_name": "expected.npy", "channel_count": {"weight": 1, "value": 2}})
    outcome, _ = run(ws, "file_check/sig.npy", params)
    assert outcome.score == 0.0 and "expected.npy" in outcome.detail


def test_text_mentioning_svg_is_not_an_image(ws):
    ws.path("plot.png").write_text("my notes: an <svg> element would be nicer")
    outcome, _ = run(ws, "file_check/plot.png", {"check": "image_file_match"})
    assert outcome.score == 0.0
    ws.path("real.svg").write_text('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>')
    outcome, _ = run(ws, "file_check/real.svg", {"check": "image_file_match"})
    assert outcome.score == 1.0


# --- tables ------------------------------------------------------------------------------------

def table(fields: dict, truth: dict, **extra) -> dict:
    return {"check": "table_file_match", "fields": fields, "ground_truth": truth, **extra}


def test_table_row_count_columns_total_duration(ws):
    durations = [1.5, 2.25, 0.125, 30.0]
    lines = ["onset,duration_sec,label"] + [f"{i * 10},{d},spindle" for i, d in enumerate(durations)]
    ws.path("events.csv").write_text("\n".join(lines[:3]) + "\n\n" + "\n".join(lines[3:]) + "\n")
    truth = {"row_count": 4, "column_names": ["onset", "duration_sec", "label"],
             "total_duration_sec": math.fsum(durations)}
    outcome, _ = run(ws, "file_check/events.csv", table({k: {} for k in truth}, truth))
    assert outcome.score == 1.0, outcome.evidence
    wrong = {"row_count": 5, "column_names": ["onset", "duration", "label"], "total_duration_sec": 33.875}
    outcome, _ = run(ws, "file_check/events.csv", table({k: {} for k in wrong}, wrong))
    assert outcome.score == pytest.approx(1 / 3, abs=1e-6)
    assert [r["ok"] for r in outcome.evidence["fields"]] == [False, False, True]


def test_tsv_and_custom_duration_column(ws):
    ws.path("ev.tsv").write_text("start\tdur\n0\t0.5\n1\t0.75\n")
    truth = {"row_count": 2, "column_names": ["start", "dur"], "total_duration_sec": 1.25}
    params = table({k: {} for k in truth}, truth, duration_column="dur")
    assert run(ws, "file_check/ev.tsv", params)[0].score == 1.0
    # without the option the default column (duration_sec) is absent: that field fails
    params = table({k: {} for k in truth}, truth)
    assert run(ws, "file_check/ev.tsv", params)[0].score == pytest.approx(2 / 3, abs=1e-6)


def test_table_in_brainbench_spelling(ws):
    ws.path("stages.csv").write_text("epoch,stage,duration_sec\n0,W,30\n1,N1,30\n2,N2,30\n")
    params = brainbench({"file_name": {"value": "stages.csv"},
                         "row_count": {"weight": 2, "value": 3},
                         "total_duration_sec": {"weight": 1, "value": 100.0, "tolerance": 5}},
                        mode="table_file_match")
    assert run(ws, "file_check/stages.csv", params)[0].score == pytest.approx(2 / 3, abs=1e-6)
    params["validator_config"]["total_duration_sec"]["tolerance"] = 10
    assert run(ws, "file_check/stages.csv", params)[0].score == 1.0


@pytest.mark.parametrize("body", [
    "onset,duration_sec\n0,1.0\n5,abc\n",  # malformed number
    "onset,duration_sec\n0,1.0\n5\n",  # short row
    "onset,duration_sec\n0,1.0\n5,nan\n",  # not finite
])
def test_table_malformed_duration_fails_that_field_only(ws, body):
    ws.path("ev.csv").write_text(body)
    truth = {"row_count": 2, "total_duration_sec": 1.0}
    params = table({"row_count": {"weight": 1}, "total_duration_sec": {"weight": 3}}, truth)
    outcome, _ = run(ws, "file_check/ev.csv", params)
    assert outcome.score == pytest.approx(1 / 4, abs=1e-6)


@pytest.mark.parametrize("body", [b"", b"\n", b"\xff\xfe\x00bin\x00ary"])
def test_empty_or_unreadable_table_scores_zero(ws, body):
    ws.path("ev.csv").write_bytes(body)
    outcome, _ = run(ws, "file_check/ev.csv", table({"row_count": {}}, {"row_count": 0}))
    assert outcome.score == 0.0


def test_header_only_table_has_zero_rows(ws):
    ws.path("ev.csv").write_text("onset,duration_sec\n")
    assert run(ws, "file_check/ev.csv", table({"row_count": {}}, {"row_count": 0}))[0].score == 1.0


def test_table_with_utf8_bom_keeps_its_first_column_name(ws):
    """pandas' to_csv(encoding='utf-8-sig') and Excel write a BOM; the first column is still
    'onset', not '\\ufeffonset'."""
    ws.path("ev.csv").write_bytes("onset,duration_sec\n0,1.0\n".encode("utf-8-sig"))
    truth = {"column_names": ["onset", "duration_sec"]}
    assert run(ws, "file_check/ev.csv", table({"column_names": {}}, truth))[0].score == 1.0


# --- images ------------------------------------------------------------------------------------

def save_figure(path: Path, fmt: str) -> None:
    fig, ax = plt.subplots(figsize=(2, 1.5), dpi=50)
    ax.plot([0, 1, 2], [1, 0, 1])
    fig.savefig(path, format=fmt)
    plt.close(fig)


def image(**extra) -> dict:
    return {"check": "image_file_match", **extra}


def test_real_png_and_jpeg_score_one(ws):
    save_figure(ws.path("psd.png"), "png")
    save_figure(ws.path("psd.jpg"), "jpeg")
    assert ws.path("psd.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert run(ws, "file_check/psd.png", image())[0].score == 1.0
    assert run(ws, "file_check/psd.jpg", image())[0].score == 1.0
    assert run(ws, "file_check/psd.jpg", image(ground_truth={"format": "jpg"}))[0].score == 1.0
    assert run(ws, "file_check/psd.jpg", image(ground_truth={"format": "JPEG"}))[0].score == 1.0


def test_image_format_mismatch_and_fakes_score_zero(ws):
    save_figure(ws.path("psd.jpg"), "jpeg")
    ws.path("fake.png").write_text("I am a picture of a PSD, honest.\n")
    ws.path("empty.png").write_bytes(b"")
    assert run(ws, "file_check/psd.jpg", image(ground_truth={"format": "png"}))[0].score == 0.0
    assert run(ws, "file_check/fake.png", image())[0].score == 0.0
    assert run(ws, "file_check/empty.png", image())[0].score == 0.0


class FakeImageJudge:
    def __init__(self, verdict: JudgeVerdict) -> None:
        self.verdict = verdict
        self.calls = []

    def __call__(self, prompt, data, media):
        self.calls.append((prompt, data, media))
        return self.verdict


def test_vlm_prompt_without_image_judge_is_unscored(ws):
    save_figure(ws.path("psd.png"), "png")
    outcome, ctx = run(ws, "file_check/psd.png", image(vlm_prompt="Is there a 10 Hz peak?"))
    assert outcome.scored is False and outcome.score is None
    assert ctx.judge_calls == []


@pytest.mark.parametrize("spelling", ["eegbench", "brainbench"])
def test_vlm_prompt_with_image_judge_uses_its_score(ws, spelling):
    save_figure(ws.path("psd.png"), "png")
    prompt = "Does the plot show an alpha peak near 10 Hz?"
    params = image(vlm_prompt=prompt) if spelling == "eegbench" else \
        brainbench({"vlm_prompt": {"weight": 1, "value": prompt}}, mode="image_file_match")
    judge = FakeImageJudge(JudgeVerdict(score=0.75, rationale="peak present, axis unlabeled", model="fake-vlm"))
    outcome, ctx = run(ws, "file_check/psd.png", params, image_judge=judge)
    assert outcome.scored and outcome.score == 0.75
    assert judge.calls == [(prompt, ws.path("psd.png").read_bytes(), "image/png")]
    assert len(ctx.judge_calls) == 1
    call = ctx.judge_calls[0]
    assert call["metric_id"] == "m_art" and call["score"] == 0.75 and call["model"] == "fake-vlm"


def test_image_judge_without_verdict_leaves_unit_unscored(ws):
    save_figure(ws.path("psd.png"), "png")
    judge = FakeImageJudge(JudgeVerdict(score=None, error="malformed twice"))
    outcome, ctx = run(ws, "file_check/psd.png", image(vlm_prompt="?"), image_judge=judge)
    assert outcome.scored is False and outcome.score is None
    assert len(ctx.judge_calls) == 1 and ctx.judge_calls[0]["score"] is None


def test_image_judge_not_asked_about_a_non_image(ws):
    ws.path("fake.png").write_text("not an image")
    judge = FakeImageJudge(JudgeVerdict(score=1.0))
    outcome, ctx = run(ws, "file_check/fake.png", image(vlm_prompt="?"), image_judge=judge)
    assert outcome.score == 0.0 and judge.calls == [] and ctx.judge_calls == []


# --- bad params ----------------------------------------------------------------------------

@pytest.mark.parametrize("params", [
    {"check": "bogus_match"},
    {"match_mode": "bogus_match", "validator_config": {}},
    {"check": "eeg_file_match", "fields": ["channel_count"], "ground_truth": {"channel_count": 2}},
    {"check": "eeg_file_match", "fields": {"channel_count": {}}, "ground_truth": {}},
    {"check": "eeg_file_match", "fields": {"channel_count": {}}},
    {"check": "eeg_file_match", "fields": {"channel_count": 3}, "ground_truth": {"channel_count": 3}},
    {"check": "eeg_file_match", "fields": {"channel_count": {"weight": "heavy"}}, "ground_truth": {"channel_count": 3}},
    {"check": "eeg_file_match", "fields": {"channel_count": {"weight": -1}}, "ground_truth": {"channel_count": 3}},
    {"check": "eeg_file_match", "fields": {"duration_sec": {"tolerance": -0.1}}, "ground_truth": {"duration_sec": 3}},
    {"check": "file_exists", "file_name": ""},
    {"check": "file_exists", "file_name": 5},
    {"match_mode": "eeg_file_match", "validator_config": ["channel_count"]},
    {"match_mode": "eeg_file_match", "validator_config": {"file_name": {"value": "  "}}},
    {"match_mode": "eeg_file_match", "validator_config": {"channel_count": {"weight": 1, "value": 2, "tolerance": "x"}}},
])
def test_bad_params_raise_metric_config_error_before_any_file(params):
    with pytest.raises(MetricConfigError):
        file_status_check("/etc/passwd", params, ScoringContext())


@pytest.mark.parametrize("params", [
    {"match_mode": "eeg_file_match", "validator_config": {"channel_count": {"weight": "heavy", "value": 4}}},
    {"match_mode": "image_file_match", "validator_config": {"vlm_prompt": {"weight": "high", "value": "?"}}},
])
def test_brainbench_non_numeric_weight_is_a_config_error(params):
    """A broken case file must raise MetricConfigError (scoring turns it into a ScoringError
    naming the instance), not a bare ValueError from float()."""
    with pytest.raises(MetricConfigError):
        file_status_check("file_check/x.npy", params, ScoringContext())
