"""A node's pre-flight (runner/run/preflight.py): the same code, kernel and inputs as the
driver, or no work and a reason naming what differs."""
from pathlib import Path
from typing import Any

from runner.run import preflight
from runner.run.preflight import Fingerprint, check_node, code_hash, fingerprint, input_hashes
from runner.sandbox import choose_backend

LOCAL, _ = choose_backend("local")


class CountingBackend:
    """A backend that says how often it was asked (for Docker each ask is a daemon query)."""

    name = "docker"

    def __init__(self, available: bool) -> None:
        self.asked = 0
        self.collected = 0
        self._available = available

    def describe(self) -> dict[str, Any]:
        self.asked += 1
        return {"name": self.name, "available": self._available, "detail": "daemon down", "image_id": "sha256:1"}

    def available(self) -> tuple[bool, str]:
        self.asked += 1
        return self._available, "daemon down"

    def collect_stale(self) -> int:
        self.collected += 1
        return 0


def make_data(root: Path, content: bytes = b"edf") -> list[str]:
    (root / "eeg").mkdir(parents=True)
    (root / "eeg" / "a.edf").write_bytes(content)
    (root / "eeg" / "b.edf").write_bytes(b"other")
    return ["eeg/a.edf", "eeg/b.edf"]


def test_a_node_like_the_driver_passes(tmp_path):
    inputs = make_data(tmp_path)
    expected = fingerprint(LOCAL.describe(), tmp_path, inputs)
    check = check_node("n1", LOCAL, False, tmp_path, expected)
    assert check.ok, check.problems


def test_different_inputs_are_named_with_the_fix(tmp_path):
    driver, node = tmp_path / "driver", tmp_path / "node"
    inputs = make_data(driver)
    make_data(node, content=b"edf, regenerated differently")
    check = check_node("n1", LOCAL, False, node, fingerprint(LOCAL.describe(), driver, inputs))
    assert not check.ok
    [problem] = check.problems
    assert "1 input file(s)" in problem and "eeg/a.edf" in problem and "make data" in problem
    missing = check_node("n1", LOCAL, False, tmp_path / "empty", fingerprint(LOCAL.describe(), driver, inputs))
    assert "2 input file(s)" in missing.problems[0] and "(missing)" in missing.problems[0]


def test_different_code_or_kernel_gets_no_work(tmp_path):
    inputs = make_data(tmp_path)
    here = fingerprint(LOCAL.describe(), tmp_path, inputs)
    other_code = Fingerprint(code="0" * 64, kernel=here.kernel, inputs=here.inputs)
    assert any("code differs" in p for p in check_node("n1", LOCAL, False, tmp_path, other_code).problems)
    other_kernel = Fingerprint(code=here.code, kernel={**here.kernel, "mne": "0.1"}, inputs=here.inputs)
    [problem] = check_node("n1", LOCAL, False, tmp_path, other_kernel).problems
    assert problem.startswith("kernel environment differs: mne")


def test_the_backend_is_asked_once_per_check(tmp_path):
    inputs = make_data(tmp_path)
    expected = fingerprint({"name": "docker", "image_id": "sha256:1"}, tmp_path, inputs)
    up = CountingBackend(available=True)
    assert check_node("n1", up, True, tmp_path, expected).ok
    assert (up.asked, up.collected) == (1, 1)
    down = CountingBackend(available=False)
    [problem] = check_node("n1", down, True, tmp_path, expected).problems
    assert problem == "sandbox backend docker cannot run here: daemon down"
    assert (down.asked, down.collected) == (1, 0)  # nothing to collect through a daemon that is down


def test_the_code_hash_follows_every_source_file(tmp_path, monkeypatch):
    monkeypatch.setattr(preflight, "CODE_DIRS", ("runner",))
    (tmp_path / "runner").mkdir()
    source = tmp_path / "runner" / "a.py"
    source.write_text("x = 1\n")
    before = code_hash(tmp_path)
    assert code_hash(tmp_path) == before
    (tmp_path / "runner" / "notes.bin").write_bytes(b"not a source")
    assert code_hash(tmp_path) == before
    source.write_text("x = 2\n")
    assert code_hash(tmp_path) != before


def test_input_hashes_mark_missing_files(tmp_path):
    inputs = make_data(tmp_path)
    hashes = input_hashes(tmp_path, [*inputs, "eeg/none.edf"])
    assert hashes["eeg/none.edf"] == "missing" and len(hashes["eeg/a.edf"]) == 64
