"""Every toolset test starts from an empty shared_state, reading the packaged recordings and
writing into its own temporary folder (a module may override `roots` with its own inputs)."""
from __future__ import annotations

from pathlib import Path

import pytest

import braintools
from braintools import paths

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(autouse=True)
def roots(tmp_path: Path) -> Path:
    paths.use_roots(DATA, tmp_path / "file_check")
    braintools.STATE.reset()
    return tmp_path / "file_check"
