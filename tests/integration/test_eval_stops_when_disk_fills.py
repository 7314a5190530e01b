"""The runs directory fills up mid-run: the run stops with one clear message and exit code 2,
nothing half-written is taken as finished, and a rerun, with space again, resumes and
completes (each instance once, `eegbench verify` whole, every oracle score 100)."""
from __future__ import annotations

import os
import subprocess

import pytest

from tests.integration.leftovers import assert_nothing_left

pytestmark = pytest.mark.integration

CASES = "fa_hjorth-01,fa_hjorth-02,fa_hjorth-03,sa_awakenings-01,sa_awakenings-02,sa_awakenings-03"
TMPFS_MB = 2
ROOM_KB = 120  # left beside the ballast: run.json and about two of these instances' records


def free_bytes(path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


@pytest.fixture
def small_runs_dir(eegbench):
    """The eegbench fixture's runs directory on a tmpfs of its own, nearly filled by a ballast."""
    runs = eegbench.runs_dir
    runs.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_MB}M", "tmpfs", str(runs)], check=True)
    ballast = runs / "ballast"
    try:
        ballast.write_bytes(b"\0" * (free_bytes(runs) - ROOM_KB * 1024))
        yield ballast
    finally:
        subprocess.run(["umount", "-l", str(runs)], check=False)


def test_a_full_runs_directory_stops_the_run_and_a_rerun_with_space_completes(eegbench, small_runs_dir):
    args = ("eval", "--model", "oracle", "--jobs", "2", "--run", "full", "--set", CASES)
    stopped = eegbench(*args)
    said = " ".join(stopped.stderr.split())
    assert stopped.returncode == 2, stopped.stderr[-3000:]
    assert said.count("error:") == 1 and "Traceback" not in stopped.stderr, stopped.stderr[-3000:]
    assert f"error: the runs directory {eegbench.runs_dir} is full: No space left on device" in said
    assert "RUN=full to resume" in said
    kept = eegbench.results("full")  # every line parses: none was left torn
    assert 1 <= len(kept) < len(CASES.split(",")), said
    whole = eegbench("verify", "full")  # what the stopped run kept is whole
    assert whole.returncode == 0, whole.stderr[-2000:]

    small_runs_dir.unlink()
    resumed = eegbench(*args)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resuming full: {len(kept)} finished" in " ".join(resumed.stderr.split())
    results = eegbench.results("full")
    assert sorted(r["case_id"] for r in results) == sorted(CASES.split(","))
    assert eegbench("verify", "full").returncode == 0
    assert {(r["status"], r["score"]) for r in results} == {("solution", 100.0)}
    assert_nothing_left(eegbench.controllers)
