"""A run resumed after its instance files changed is refused with one message naming the
changed, added and removed cases and the two ways forward; `--rerun-changed` reruns exactly the
changed and new cases, sets the others' entries aside, records it, and `verify` passes."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.integration.conftest import PROJECT_ROOT

SOURCE = PROJECT_ROOT / "instances" / "foundational_analysis"


def _case(folder: Path, number: int) -> Path:
    return shutil.copy(SOURCE / f"fa_hjorth-0{number}.json", folder)


def _lines(eegbench, run: str) -> list[tuple[str, float]]:
    return [(r["case_id"], r["score"]) for r in eegbench.results(run)]


def test_a_changed_instance_set_is_refused_then_rerun_exactly(eegbench, tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    for number in (1, 2, 3):
        _case(cases, number)
    args = ("eval", "--model", "oracle", "--sandbox", "local", "--cases", str(cases), "--run", "r")
    first = eegbench(*args)
    assert first.returncode == 0, first.stderr[-3000:]
    run = eegbench.runs_dir / "r"
    before = (run / "results.jsonl").read_bytes()

    # one instance changes (its instruction), one is added, one removed
    changed = cases / "fa_hjorth-02.json"
    data = json.loads(changed.read_text())
    data["agent_input"]["instruction"] += "\nReport the values rounded as computed."
    changed.write_text(json.dumps(data))
    _case(cases, 4)
    (cases / "fa_hjorth-03.json").unlink()

    refused = eegbench(*args)
    out = refused.stdout + refused.stderr
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert refused.returncode == 2 and len(errors) == 1 and "Traceback" not in out, out[-3000:]
    for expected in ("1 changed (fa_hjorth-02)", "1 added (fa_hjorth-04)", "1 removed (fa_hjorth-03)",
                     "--rerun-changed", "RUN="):
        assert expected in errors[0], out[-3000:]
    assert (run / "results.jsonl").read_bytes() == before  # nothing touched

    rerun = eegbench(*args, "--rerun-changed")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    lines = _lines(eegbench, "r")
    assert lines[0] == ("fa_hjorth-01", 100.0)  # kept from the first invocation, not rerun
    assert sorted(lines) == [("fa_hjorth-01", 100.0), ("fa_hjorth-02", 100.0), ("fa_hjorth-04", 100.0)]
    assert json.loads((run / "instances" / "fa_hjorth-02" / "instance.json").read_text())["agent_input"][
        "instruction"].endswith("rounded as computed.")
    record = json.loads((run / "run.json").read_text())
    assert record["reruns"][0] | {"at": None} == {"at": None, "changed": ["fa_hjorth-02"], "added": ["fa_hjorth-04"],
                                                  "removed": ["fa_hjorth-03"], "superseded": "superseded/1"}
    assert sorted(p.name for p in (run / "superseded" / "1").iterdir()) == ["fa_hjorth-02", "fa_hjorth-03"]
    verified = eegbench("verify", "r")
    assert verified.returncode == 0, verified.stdout[-3000:] + verified.stderr[-3000:]

    again = eegbench(*args)  # the set now matches: an ordinary resume with nothing left to run
    assert again.returncode == 0 and _lines(eegbench, "r") == lines, again.stderr[-3000:]
