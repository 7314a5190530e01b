"""`eegbench verify RUN` on a real oracle run: whole as written, and each kind of damage named."""
from __future__ import annotations

import json
import shutil

import pytest

pytestmark = pytest.mark.integration

CASES = "fa_reref_filter_fif-01,fa_hjorth-01"  # the first writes a FIF artifact


def said(proc) -> str:
    return " ".join(proc.stderr.split())


def test_verify_passes_a_whole_run_and_names_every_problem(eegbench):
    done = eegbench("eval", "--model", "oracle", "--set", CASES, "--run", "v")
    assert done.returncode == 0, done.stderr[-2000:]
    whole = eegbench("verify", "v")
    assert whole.returncode == 0 and "2/2 entries finished, 1 artifacts checked: whole" in said(whole)

    run = eegbench.runs_dir / "v"
    results = run / "results.jsonl"
    lines = results.read_text().splitlines()
    results.write_text("\n".join(lines + [lines[0], lines[1][:40]]) + "\n")  # a duplicate and a torn line
    (run / "instances" / "fa_hjorth-01" / "score.json").unlink()
    artifact = next((run / "instances" / "fa_reref_filter_fif-01" / "artifacts").rglob("*.fif"))
    data = bytearray(artifact.read_bytes())
    data[-1] ^= 0xFF
    artifact.write_bytes(bytes(data))
    broken = eegbench("verify", "v")
    text = said(broken)
    assert broken.returncode == 1
    assert f"{json.loads(lines[0])['case_id']} is finished 2 times" in text
    assert "results.jsonl line 4: not a whole result" in text
    assert "fa_hjorth-01: missing score.json" in text
    assert "does not match its sha256/size" in text and "4 problem(s)" in text


def test_verify_checks_the_instance_set_of_a_complete_run(eegbench):
    done = eegbench("eval", "--model", "oracle", "--set", "fa_hjorth-01", "--run", "w")
    assert done.returncode == 0, done.stderr[-2000:]
    saved = eegbench.runs_dir / "w" / "instances" / "fa_hjorth-01" / "instance.json"
    instance = json.loads(saved.read_text())
    instance["eval_config"]["metrics"][0]["params"]["gt_value"] = -1.0
    saved.write_text(json.dumps(instance))
    broken = eegbench("verify", "w")
    assert broken.returncode == 1 and "instance_set_hash does not match" in said(broken)
    shutil.rmtree(eegbench.runs_dir / "w" / "instances" / "fa_hjorth-01")
    gone = eegbench("verify", "w")
    assert gone.returncode == 1 and "fa_hjorth-01: missing instance.json" in said(gone)
