"""bind_dataset (runner/benchmark/datasets/bind.py): bad input, opaque staging, skips with reasons."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from runner.benchmark.datasets.bind import bind_dataset
from tests.runner.benchmark.datasets import fixtures
from validation.errors import UserError

PROJECT = Path(__file__).resolve().parents[4]


def test_bad_input_names_the_flag(tmp_path):
    with pytest.raises(UserError, match="--max-bindings must be at least 1, got 0"):
        bind_dataset("hmc", tmp_path, PROJECT, tmp_path / "data", tmp_path / "out", max_bindings=0)
    with pytest.raises(UserError, match="is not a directory"):
        bind_dataset("hmc", tmp_path / "absent", PROJECT, tmp_path / "data", tmp_path / "out")
    proc = subprocess.run([sys.executable, "-m", "runner.cli", "truth", "--dataset", "hmc", "--root", str(tmp_path),
                           "--max-bindings", "0"], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--max-bindings must be at least 1, got 0" in proc.stderr


def test_one_task_bound_to_hmc_is_staged_opaquely_and_skips_are_explained(tmp_path):
    root = fixtures.write_hmc(tmp_path / "hmc")
    result = bind_dataset("hmc", root, PROJECT, tmp_path / "data", tmp_path / "out", max_bindings=1,
                          tasks=["fa_band_power_db", "sa_stage_percent", "nc_p1_peak"], progress=False)
    bound = sorted(p.relative_to(tmp_path / "out") for p in result.written)
    assert [p.parts[:2] for p in bound] == [("hmc", "fa_band_power_db"), ("hmc", "sa_stage_percent")]
    reasons = {(s.task_id, s.subject): s.reason for s in result.skipped}
    assert reasons[("nc_p1_peak", None)].startswith("no local binding declared")
    assert any(r.startswith("fits, beyond --max-bindings 1") for r in reasons.values())
    instance = json.loads(result.written[0].read_text())
    (staged,) = instance["agent_input"]["data_path"]
    assert staged.startswith("local/hmc/hmc_r") and "SN0" not in staged
    assert (tmp_path / "data" / staged).is_file()
    assert "Haaglanden" in instance["agent_input"]["instruction"]  # the {recording} description
