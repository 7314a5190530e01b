"""A node's pre-flight (runner/run/preflight.py): the same code, kernel and inputs as the
driver, or no work and a reason naming what differs."""
from pathlib import Path

from runner.run import preflight
from runner.run.preflight import Fingerprint, check_node, code_hash, fingerprint, input_hashes


def make_data(root: Path, content: bytes = b"edf") -> list[str]:
    (root / "eeg").mkdir(parents=True)
    (root / "eeg" / "a.edf").write_bytes(content)
    (root / "eeg" / "b.edf").write_bytes(b"other")
    return ["eeg/a.edf", "eeg/b.edf"]


def test_a_node_like_the_driver_passes(tmp_path):
    inputs = make_data(tmp_path)
    expected = fingerprint("local", tmp_path, inputs)
    check = check_node("n1", "local", False, tmp_path, expected)
    assert check.ok, check.problems


def test_different_inputs_are_named_with_the_fix(tmp_path):
    driver, node = tmp_path / "driver", tmp_path / "node"
    inputs = make_data(driver)
    make_data(node, content=b"edf, regenerated differently")
    check = check_node("n1", "local", False, node, fingerprint("local", driver, inputs))
    assert not check.ok
    [problem] = check.problems
    assert "1 input file(s)" in problem and "eeg/a.edf" in problem and "make data" in problem
    missing = check_node("n1", "local", False, tmp_path / "empty", fingerprint("local", driver, inputs))
    assert "2 input file(s)" in missing.problems[0] and "(missing)" in missing.problems[0]


def test_different_code_or_kernel_gets_no_work(tmp_path):
    inputs = make_data(tmp_path)
    here = fingerprint("local", tmp_path, inputs)
    other_code = Fingerprint(code="0" * 64, kernel=here.kernel, inputs=here.inputs)
    assert any("code differs" in p for p in check_node("n1", "local", False, tmp_path, other_code).problems)
    other_kernel = Fingerprint(code=here.code, kernel={**here.kernel, "mne": "0.1"}, inputs=here.inputs)
    [problem] = check_node("n1", "local", False, tmp_path, other_kernel).problems
    assert problem.startswith("kernel environment differs: mne")


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
