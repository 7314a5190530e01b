"""Test tiers. Every test is `unit` unless it is marked (or lives in tests/integration/):

- integration: drives a real sandbox, kernel, model server or the eegbench command;
- docker: needs the Docker daemon and the kernel image.

`make test-fast` runs `-m "not integration and not docker"`; `make test` runs everything.
"""
from __future__ import annotations

from pathlib import Path

import pytest

INTEGRATION_DIR = Path(__file__).parent / "integration"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if INTEGRATION_DIR in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.integration)
