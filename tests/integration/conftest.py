"""Helpers for the end-to-end tests: run the real `eegbench` command and read its run directory."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def kernel_processes() -> set[int]:
    """Pids of sandboxed kernels or bwrap launchers alive right now."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"ipykernel" in cmdline or b"kernelapp" in cmdline or cmdline.startswith(b"bwrap"):
            found.add(int(entry.name))
    return found


class Eval:
    def __init__(self, runs_dir: Path) -> None:
        self.runs_dir = runs_dir

    def env(self) -> dict:
        return {**os.environ, "EEGBENCH_RUNS": str(self.runs_dir)}

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "runner.cli", *args]

    def __call__(self, *args: str, timeout: float = 1200) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(*args), cwd=PROJECT_ROOT, env=self.env(), capture_output=True,
                              text=True, timeout=timeout)

    def popen(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen(self.command(*args), cwd=PROJECT_ROOT, env=self.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def results(self, run: str) -> list[dict]:
        path = self.runs_dir / run / "results.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def transcript(self, run: str, case: str) -> dict:
        return json.loads((self.runs_dir / run / "instances" / case / "transcript.json").read_text())


@pytest.fixture
def eegbench(tmp_path) -> Eval:
    before = kernel_processes()
    yield Eval(tmp_path / "runs")
    assert_no_leftover(before)


def assert_no_leftover(before: set[int]) -> None:
    deadline = time.monotonic() + 5  # killed processes take a moment to be reaped
    while (leftover := kernel_processes() - before) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not leftover, f"sandbox processes left behind: {sorted(leftover)}"


@pytest.fixture(scope="session")
def all_case_ids() -> list[str]:
    from runner import catalog

    return [i.case_id for i in catalog.load_all()]
