import datetime as dt
import io
from decimal import Decimal
from pathlib import Path

import edfio
import mne
import numpy as np
import pytest
from scipy import signal

from runner.benchmark.variants import edf_edit
from runner.benchmark.variants.rules import TRANSFORMS, VariantRules
from runner.benchmark.variants.transforms import VariantError, apply, renamed
from runner.core.paths import Environment

FS = 160
DURATION = 60
EDF = "synth/sub-01_task-x_eeg.edf"
EVENTS = "synth/sub-01_task-x_events.tsv"
LABELS = ["O1..", "EEG Fz", "Cz", "Pz"]
START = dt.datetime(2020, 3, 4, 0, 0, 20)  # just after midnight: a time offset moves the date too
RULES = VariantRules(safe=list(TRANSFORMS), channel_params=["channel", "channels"], time_params=["start_s"],
                     length_params=["length_s"])
PARAMS = {"channel": "O1..", "channels": [["Cz", "Pz"], "EEG Fz"], "start_s": 20, "length_s": 20,
          "band_hz": [8, 13], "recording": "four channels"}


def _signals(rng):
    """O1 10 Hz growing with time (a window's band power depends on where it is), Fz 6 Hz with
    an asymmetric physical range, Cz a 10 Hz rhythm plus a positive evoked bump 100 ms after
    each event, Pz 20 Hz."""
    t = np.arange(FS * DURATION) / FS
    samples = 240 + 320 * np.arange(DURATION // 2 - 1) + rng.integers(0, 60, DURATION // 2 - 1)
    bump = np.zeros_like(t)
    for onset in samples / FS:
        bump += 30 * np.exp(-0.5 * ((t - onset - 0.1) / 0.015) ** 2)
    data = {
        "O1..": (20 + 0.5 * t) * np.sin(2 * np.pi * 10 * t) + rng.normal(0, 3, t.size),
        "EEG Fz": 20 * np.sin(2 * np.pi * 6 * t + 0.3) + rng.normal(0, 2, t.size),
        "Cz": 10 * np.sin(2 * np.pi * 10 * t) + bump + rng.normal(0, 2, t.size),
        "Pz": 15 * np.sin(2 * np.pi * 20 * t) + rng.normal(0, 2, t.size),
    }
    ranges = {"O1..": (-200, 200), "EEG Fz": (-100.5, 150.25), "Cz": (-300, 300), "Pz": (-100, 100)}
    return data, ranges, samples


@pytest.fixture(scope="module")
def inputs():
    """A 4-channel EDF+C (160 Hz, 60 s, 1-s records, events as EDF+ annotations) and its BIDS
    events.tsv (with a BOM, as pylossless writes it)."""
    data, ranges, samples = _signals(np.random.default_rng(7))
    signals = [edfio.EdfSignal(data[name], FS, label=name, physical_dimension="uV", physical_range=ranges[name])
               for name in LABELS]
    annotations = [edfio.EdfAnnotation(s / FS, None, "stim") for s in samples]
    edf = edfio.Edf(signals, data_record_duration=1, annotations=annotations, starttime=START.time(),
                    recording=edfio.Recording(startdate=START.date()))
    buffer = io.BytesIO()
    edf.write(buffer)
    rows = ["onset\tduration\ttrial_type\tsample"] + [f"{float(s / FS)!r}\tn/a\tstim\t{s}" for s in samples]
    return {EDF: buffer.getvalue(), EVENTS: ("\ufeff" + "\n".join(rows) + "\n").encode("utf-8")}


def derive(name, inputs, seed=0, params=PARAMS, rules=RULES):
    return apply(name, inputs, params, rules, np.random.default_rng(seed))


def read(data: bytes, tmp_path: Path, name="x.edf"):
    path = tmp_path / name
    path.write_bytes(data)
    return mne.io.read_raw_edf(path, preload=True, verbose="ERROR")


def band_power_db(raw, channel, start_s, length_s, band=(8, 13)):
    """fa_band_power_db's recipe: Welch (2-s Hann, 50 %), bin sum over the band, dB re 1 uV^2."""
    x = raw.get_data(picks=[channel])[0] * 1e6
    sfreq = raw.info["sfreq"]
    x = x[int(round(start_s * sfreq)):int(round((start_s + length_s) * sfreq))]
    freqs, psd = signal.welch(x, fs=sfreq, window="hann", nperseg=2 * FS, noverlap=FS)
    power = psd[(freqs >= band[0]) & (freqs <= band[1])].sum() * (freqs[1] - freqs[0])
    return 10 * np.log10(power)


def events_table(data: bytes):
    lines = data.decode("utf-8").lstrip("\ufeff").splitlines()
    header = lines[0].split("\t")
    rows = [dict(zip(header, line.split("\t"))) for line in lines[1:]]
    return [Decimal(r["onset"]) for r in rows], [int(r["sample"]) for r in rows]


def evoked_peak(raw, events: bytes, channel, window_ms=(50, 150)):
    """nc_p1_peak's recipe in numpy: epochs -0.2..0.5 s at the tsv's samples, baseline up to 0,
    average; the most positive sample inside the window: (latency ms, amplitude uV, trace)."""
    x = raw.get_data(picks=[channel])[0] * 1e6
    _, samples = events_table(events)
    lags = np.arange(int(-0.2 * FS), int(0.5 * FS) + 1)
    epochs = np.stack([x[s + lags] for s in samples])
    epochs -= epochs[:, lags <= 0].mean(axis=1, keepdims=True)
    trace, times_ms = epochs.mean(axis=0), lags / FS * 1000
    inside = np.flatnonzero((times_ms >= window_ms[0]) & (times_ms <= window_ms[1]))
    peak = inside[np.argmax(trace[inside])]
    return times_ms[peak], trace[peak], trace


def lsb_volts(data: bytes, label: str):
    edf = edf_edit.parse(data, "x.edf")
    return abs(edf.signals[edf.index(label)].gain) * 1e-6


# --- one test per transformation ----------------------------------------------------------


def test_permute_keeps_every_value_by_name_and_changes_the_order(inputs, tmp_path):
    derived = derive("permute_channels", inputs)
    before, after = read(inputs[EDF], tmp_path, "a.edf"), read(derived.inputs[EDF], tmp_path, "b.edf")
    assert after.ch_names != before.ch_names and sorted(after.ch_names) == sorted(before.ch_names)
    powers_before = {c: band_power_db(before, c, 20, 20) for c in LABELS}
    powers_after = {c: band_power_db(after, c, 20, 20) for c in LABELS}
    assert powers_after == powers_before
    assert sorted(LABELS, key=powers_after.get) == sorted(LABELS, key=powers_before.get)
    assert derived.record["order"][EDF] == after.ch_names
    assert edf_edit.parse(derived.inputs[EDF], EDF).signals[-1].is_annotation  # annotations stay last
    assert list(after.annotations.onset) == list(before.annotations.onset)
    assert derived.params == PARAMS and derived.inputs[EVENTS] == inputs[EVENTS]


def test_rename_maps_files_and_params_alike(inputs, tmp_path):
    derived = derive("rename_channels", inputs)
    names = derived.record["names"]
    assert names == {"O1..": "EEG O1-Ref", "EEG Fz": "Fz-REF", "Cz": "EEG Cz-Ref", "Pz": "EEG Pz-Ref"}
    assert derived.params["channel"] == "EEG O1-Ref"
    assert derived.params["channels"] == [["EEG Cz-Ref", "EEG Pz-Ref"], "Fz-REF"]
    assert derived.params["recording"] == PARAMS["recording"]  # not a declared channel param
    before, after = read(inputs[EDF], tmp_path, "a.edf"), read(derived.inputs[EDF], tmp_path, "b.edf")
    assert set(after.ch_names).isdisjoint(before.ch_names)
    assert band_power_db(after, derived.params["channel"], 20, 20) == band_power_db(before, "O1..", 20, 20)
    assert np.array_equal(after.get_data(), before.get_data())
    assert derived.inputs[EVENTS] == inputs[EVENTS]


def test_rename_records_param_strings_that_name_no_channel(inputs):
    derived = derive("rename_channels", inputs, params={**PARAMS, "channel": "O1-M2"})
    assert derived.params["channel"] == "O1-M2" and derived.record["unmapped_params"] == ["O1-M2"]


@pytest.mark.parametrize(("label", "new"), [("O1..", "EEG O1-Ref"), ("T10.", "EEG T10-Ref"),
                                            ("EEG F3", "F3-REF"), ("EOG EOG1", "EOG-EOG1"),
                                            ("F3-REF", "EEG F3-Ref"), ("A12", "EEG A12-Ref")])
def test_renamed_rule(label, new):
    assert renamed(label) == new


def test_renamed_refuses_a_label_with_no_short_equivalent():
    with pytest.raises(VariantError, match="16 characters"):
        renamed("Fp1-F7 long nam")


def test_time_offset_keeps_values_and_moves_events_by_exactly_d(inputs, tmp_path):
    derived = derive("time_offset", inputs, seed=3)
    d = derived.record["offset_s"]
    assert isinstance(d, int) and 5 <= d <= 60 and derived.params["start_s"] == 20 + d
    before, after = read(inputs[EDF], tmp_path, "a.edf"), read(derived.inputs[EDF], tmp_path, "b.edf")
    assert after.n_times - before.n_times == d * FS  # duration grows by d
    assert band_power_db(after, "O1..", derived.params["start_s"], 20) == band_power_db(before, "O1..", 20, 20)
    assert np.array_equal(after.get_data()[:, :d * FS], before.get_data()[:, :d * FS])  # copied, not flat
    onsets, samples = events_table(inputs[EVENTS])
    new_onsets, new_samples = events_table(derived.inputs[EVENTS])
    assert [b - a for a, b in zip(onsets, new_onsets)] == [d] * len(onsets)
    assert [b - a for a, b in zip(samples, new_samples)] == [d * FS] * len(samples)
    assert evoked_peak(after, derived.inputs[EVENTS], "Cz")[:2] == evoked_peak(before, inputs[EVENTS], "Cz")[:2]
    assert np.array_equal(after.annotations.onset, before.annotations.onset + d)  # EDF+ TALs moved too
    assert after.info["meas_date"] == before.info["meas_date"] - dt.timedelta(seconds=d)


def test_unit_change_keeps_volts_and_declares_another_dimension(inputs, tmp_path):
    derived = derive("unit_change", inputs)
    edf = edf_edit.parse(derived.inputs[EDF], EDF)
    assert [edf.signals[i].dimension.strip() for i in edf.ordinary] == ["mV"] * 4
    assert derived.record["units"] == {EDF: {"uV->mV": 4}}
    before, after = read(inputs[EDF], tmp_path, "a.edf"), read(derived.inputs[EDF], tmp_path, "b.edf")
    for name in LABELS:
        step = lsb_volts(inputs[EDF], name)
        assert np.max(np.abs(after.get_data([name]) - before.get_data([name]))) < 0.5 * step
    assert edf.signals[edf.index("EEG Fz")].physical_min.strip() == "-0.1005"


def test_polarity_negates_signals_and_flips_a_positive_peak(inputs, tmp_path):
    derived = derive("polarity", inputs)
    before, after = read(inputs[EDF], tmp_path, "a.edf"), read(derived.inputs[EDF], tmp_path, "b.edf")
    for name in LABELS:  # "EEG Fz"'s asymmetric range needs a rounded negative: within 1/2 step
        assert np.max(np.abs(after.get_data([name]) + before.get_data([name]))) < 0.5 * lsb_volts(inputs[EDF], name)
    assert band_power_db(after, "O1..", 20, 20) == pytest.approx(band_power_db(before, "O1..", 20, 20), abs=1e-9)
    latency, amplitude, trace = evoked_peak(before, inputs[EVENTS], "Cz")
    _, _, flipped = evoked_peak(after, derived.inputs[EVENTS], "Cz")
    assert amplitude > 10 and 90 <= latency <= 110
    assert np.allclose(flipped, -trace, atol=1e-6) and flipped[np.argmax(trace)] < -10
    assert list(after.annotations.description) == list(before.annotations.description)


def test_noise_reaches_the_stated_snr_and_follows_the_seed(inputs, tmp_path):
    before = read(inputs[EDF], tmp_path, "a.edf")
    seen = set()
    for seed in range(4):
        derived = derive("noise", inputs, seed=seed)
        snr = derived.record["snr_db"]
        seen.add(snr)
        after = read(derived.inputs[EDF], tmp_path, "b.edf")
        for name in LABELS:
            x, y = before.get_data([name])[0], after.get_data([name])[0]
            measured = 10 * np.log10(np.var(x) / np.mean((y - x) ** 2))
            assert abs(measured - snr) < 1.0, (seed, name, measured, snr)
        assert derived.record["clipped_samples"] == {EDF: 0}
        assert derived.inputs[EVENTS] == inputs[EVENTS]
    assert len(seen) > 1
    assert derive("noise", inputs, seed=1).inputs[EDF] == derive("noise", inputs, seed=1).inputs[EDF]
    assert derive("noise", inputs, seed=1).inputs[EDF] != derive("noise", inputs, seed=2).inputs[EDF]


def test_noise_is_clipped_at_the_digital_range(inputs, tmp_path):
    edf = edf_edit.parse(inputs[EDF], EDF)
    index = edf.index("Pz")
    clipped_edf, clipped = edf_edit.add_physical(edf, index, np.full(edf.n_records * FS, 90.0))
    after, step = clipped_edf.physical(index), edf.signals[index].gain
    beyond = np.count_nonzero(edf.physical(index) + 90.0 > 100.0 + step / 2)  # past the last step
    assert clipped == beyond > 1000 and after.max() == pytest.approx(100.0)
    assert np.allclose(after[after < 99.0], edf.physical(index)[after < 99.0] + 90.0, atol=step / 2)


def test_shift_window_moves_params_and_leaves_inputs(inputs, tmp_path):
    derived = derive("shift_window", inputs, seed=5)
    delta = derived.record["shift_s"]
    assert delta != 0 and abs(delta) <= 10 and derived.params["start_s"] == 20 + delta
    assert derived.inputs == inputs
    raw = read(inputs[EDF], tmp_path)
    assert band_power_db(raw, "O1..", derived.params["start_s"], 20) != band_power_db(raw, "O1..", 20, 20)
    # O1 grows with time: a later window has more alpha power
    assert (band_power_db(raw, "O1..", derived.params["start_s"], 20) > band_power_db(raw, "O1..", 20, 20)) == (delta > 0)


def test_shift_window_stays_inside_the_recording(inputs):
    deltas = {derive("shift_window", inputs, seed=s, params={**PARAMS, "start_s": 35}).record["shift_s"]
              for s in range(40)}
    assert deltas == set(range(-10, 6)) - {0}  # 35 + 5 + length 20 = 60 s, the end
    with pytest.raises(VariantError, match="inside the 60-s recording"):
        derive("shift_window", inputs, params={**PARAMS, "start_s": 0, "length_s": 60})
    with pytest.raises(VariantError, match="no time_params"):
        derive("shift_window", inputs, rules=VariantRules(safe=list(TRANSFORMS)))


# --- determinism, real data, refusals ------------------------------------------------------


@pytest.mark.parametrize("name", TRANSFORMS)
def test_same_seed_same_bytes(inputs, name):
    first, second = derive(name, inputs, seed=11), derive(name, inputs, seed=11)
    assert first.inputs == second.inputs and first.params == second.params and first.record == second.record
    assert list(first.inputs) == list(inputs)
    assert first.inputs != inputs or name == "shift_window"


def test_real_eegmmidb_file_round_trips_permuted(tmp_path):
    path = Environment.from_os().paths.data_root / "eegmmidb" / "S001R02.edf"
    data = path.read_bytes()
    assert edf_edit.to_bytes(edf_edit.parse(data, str(path))) == data  # parse + write is lossless
    derived = derive("permute_channels", {"eegmmidb/S001R02.edf": data},
                     params={"channel": "O1..", "start_s": 0})
    before, after = read(data, tmp_path, "a.edf"), read(derived.inputs["eegmmidb/S001R02.edf"], tmp_path, "b.edf")
    assert after.ch_names != before.ch_names and sorted(after.ch_names) == sorted(before.ch_names)
    for name in before.ch_names:
        assert np.array_equal(after.get_data([name]), before.get_data([name])), name
    assert list(after.annotations.description) == list(before.annotations.description)


@pytest.mark.parametrize("name", TRANSFORMS)
@pytest.mark.parametrize("other", ["mne_sample/test_raw.fif", "plux/x.h5", "yasa/x.csv", "spkit/x.pkl"])
def test_unknown_input_formats_are_refused_by_name(inputs, name, other):
    with pytest.raises(VariantError, match=other.replace(".", r"\.")):
        derive(name, {**inputs, other: b"..."})


def test_refusals_say_why(inputs):
    with pytest.raises(VariantError, match="no EDF input"):
        derive("polarity", {EVENTS: inputs[EVENTS]})
    with pytest.raises(VariantError, match="declared unsafe.*the sign is the answer"):
        derive("polarity", inputs, rules=VariantRules(safe=["noise"], unsafe={
            t: "the sign is the answer" for t in TRANSFORMS if t != "noise"}))
    with pytest.raises(VariantError, match=r"names \['start_s'\], absent"):
        derive("time_offset", inputs, params={"channel": "O1..", "channels": []})
    with pytest.raises(VariantError, match="not an EDF file"):
        derive("noise", {EDF: b"garbage" * 100})
