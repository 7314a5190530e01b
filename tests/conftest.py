"""Test tiers. Every test is `unit` unless it is marked (or lives in tests/integration/):

- integration: drives a real sandbox, kernel, model server or the eegbench command;
- docker: needs the Docker daemon and the kernel image.

`make test-fast` runs `-m "not integration and not docker"`; `make test` runs everything in
three pytest-xdist workers, a test file to a worker (--dist loadfile), handed out in collection
order. The longest files (LONGEST, slowest first, as measured in a fresh-clone CI run) are
collected first, so no worker is left with a long file at the end while the others idle:
the sum of the files' times over three workers is within a minute of the suite's wall time.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import runner  # noqa: F401  before any test module loads numpy: runner/numerics.py pins its CPU paths

INTEGRATION_DIR = Path(__file__).parent / "integration"
# seconds in the CI run of 2026-12-05 (junit times of a `make test`), slowest first
LONGEST = [INTEGRATION_DIR / name for name in (
    "test_eval_on_ray_cluster.py",                 # 271
    "test_eval_oracle_full_benchmark.py",          # 247
    "test_limits_hold_on_cgroup_v2.py",            # 245
    "test_eval_oracle_on_docker.py",               # 223
    "test_truth_regenerates.py",                   # 220
    "test_truth_binds_local_datasets.py",          # 202
    "test_eval_brainagent_paradigm.py",            # 187
    "test_runs_as_an_ordinary_user.py",            # 182
    "test_eval_scores_case_files.py",              # 154
    "test_eval_survives_chaos.py",                 # 115
    "test_eval_contains_hostile_code.py",          # 108
    "test_report_ranks_runs.py",                   # 108
)]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if INTEGRATION_DIR in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.integration)
    rank = {path: number for number, path in enumerate(LONGEST)}
    items.sort(key=lambda item: rank.get(Path(str(item.fspath)), len(LONGEST)))  # stable: the rest keep their order
