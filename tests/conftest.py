"""Test tiers. Every test is `unit` unless it is marked (or lives in tests/integration/):

- integration: drives a real sandbox, kernel, model server or the eegbench command;
- docker: needs the Docker daemon and the kernel image.

`make test-fast` runs `-m "not integration and not docker"`; `make test` runs everything in
four pytest-xdist workers, a test file to a worker (--dist loadfile), handed out in collection
order (--no-loadscope-reorder: by default xdist reorders files by their number of tests, which
left the longest files, each one or two long tests, to the end of the run). The longest files
(LONGEST, slowest first, as measured in a `make test`) are collected first, so no worker is
left with a long file at the end while the others idle.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import runner  # noqa: F401  before any test module loads numpy: runner/benchmark/numerics.py pins its CPU paths

INTEGRATION_DIR = Path(__file__).parent / "integration"
# seconds in a `make test` of 2026-12-07 (four workers on 2 cores), slowest first
LONGEST = [INTEGRATION_DIR / name for name in (
    "test_truth_regenerates.py",                   # 468
    "test_limits_hold_on_cgroup_v2.py",            # 461
    "test_eval_on_ray_cluster.py",                 # 459
    "test_eval_oracle_on_docker.py",               # 435
    "test_eval_oracle_full_benchmark.py",          # 406
    "test_truth_binds_local_datasets.py",          # 373
    "test_runs_as_an_ordinary_user.py",            # 281
    "test_eval_survives_chaos.py",                 # 230
    "test_eval_brainagent_paradigm.py",            # 226
    "test_report_ranks_runs.py",                   # 160
    "test_eval_agentbench_tasks.py",               # 122
    "test_eval_on_docker.py",                      # 122
)]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if INTEGRATION_DIR in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.integration)
    rank = {path: number for number, path in enumerate(LONGEST)}
    items.sort(key=lambda item: rank.get(Path(str(item.fspath)), len(LONGEST)))  # stable: the rest keep their order
