import hashlib
import json
from collections import Counter

import numpy as np
import pytest

from runner.benchmark.agentbench import contamination, specs
from runner.benchmark.catalog import load_all
from runner.core.paths import PROJECT_ROOT
from tests.fixtures.datasets import agentbench_data_root


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    return agentbench_data_root(tmp_path_factory.mktemp("t2data"))


@pytest.fixture(scope="module")
def epochs(data_root):
    return contamination.build_epochs(data_root)


def test_mixing_rule_gives_the_requested_snr():
    rng = np.random.default_rng(0)
    eeg, artifact = rng.normal(0, 10, 512), rng.normal(0, 80, 512)
    for snr in contamination.SNR_LEVELS_DB:
        mixed = contamination.mix(eeg, artifact, snr)
        added = mixed - eeg
        ratio = np.sqrt(np.mean(added ** 2)) / np.sqrt(np.mean(eeg ** 2))
        assert ratio == pytest.approx(10 ** (-snr / 10))  # §6.9 eq. 12
    assert 10 ** (-2 / 10) == pytest.approx(0.63, abs=0.01)  # +2 dB: artifact/EEG RMS ~0.63
    assert 10 ** (7 / 10) == pytest.approx(5.01, abs=0.01)  # -7 dB: ~5.01


def test_balanced_classes_and_snr_levels(epochs):
    assert Counter(e.label for e in epochs) == {"clean": 100, "ocular": 100, "muscle": 100}
    for label in ("ocular", "muscle"):
        assert Counter(e.snr_db for e in epochs if e.label == label) == {s: 10 for s in range(-7, 3)}
    assert all(e.snr_db is None for e in epochs if e.label == "clean")
    assert len({e.eeg_source for e in epochs}) == 300  # every epoch has its own EEG segment
    assert all(e.signal.shape == (512,) and np.isfinite(e.signal).all() for e in epochs)


def test_names_and_sidecars_do_not_reveal_the_label(epochs):
    assert [e.record for e in epochs] == [f"r{i:03d}" for i in range(1, 301)]
    assert len({e.label for e in epochs[:10]}) > 1  # shuffled, not grouped by class
    sidecar = contamination.sidecar_text().decode()
    assert not any(label in sidecar for label in contamination.LABELS)


def test_files_are_byte_identical_and_match_the_committed_instances(data_root, epochs):
    folder = data_root / contamination.FOLDER
    first = {p.name: p.read_bytes() for p in folder.iterdir()}
    contamination.write_epochs(data_root, contamination.build_epochs(data_root))
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == first
    committed = [i for i in load_all() if i.task_id == specs.T2_ID]
    assert len(committed) == 300
    for instance in committed:
        for rel, sha in instance.reference.inputs.items():
            assert hashlib.sha256((data_root / rel).read_bytes()).hexdigest() == sha, rel
    stored = np.load(folder / "r001.npy")
    assert stored.shape == (1, 512) and stored.dtype == np.float64
    assert json.loads((folder / "r001.json").read_text())["sfreq"] == 256.0


def test_committed_t2_spec_is_what_the_generator_gives(data_root):
    path = PROJECT_ROOT / "instances" / "tasks" / f"{specs.T2_ID}.json"
    assert path.read_text() == specs.spec_text(specs.t2_spec(data_root))
