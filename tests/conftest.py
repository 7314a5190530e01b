"""Test tiers. Every test is `unit` unless it is marked (or lives in tests/integration/):

- integration: drives a real sandbox, kernel, model server or the eegbench command;
- docker: needs the Docker daemon and the kernel image.

`make test-fast` runs `-m "not integration and not docker"`; `make test` runs everything in
three pytest-xdist workers, a test file to a worker (--dist loadfile). The file holding the
full-benchmark run (FIRST) is collected first, so one worker starts it at once while the
others take the remaining files: the full run alone keeps about 1.6 of the 2 cores busy.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import runner  # noqa: F401  before any test module loads numpy: runner/numerics.py pins its CPU paths

INTEGRATION_DIR = Path(__file__).parent / "integration"
FIRST = INTEGRATION_DIR / "test_eval_oracle_full_benchmark.py"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if INTEGRATION_DIR in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.integration)
    items.sort(key=lambda item: Path(str(item.fspath)) != FIRST)  # stable: the rest keep their order
