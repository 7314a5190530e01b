"""WarmPool on its own (a fake backend: the real backends run in tests/integration)."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from runner.run.warm_pool import WarmPool
from runner.sandbox.base import SandboxError, SandboxSpec


class FakeSandbox:
    def __init__(self, spec: SandboxSpec) -> None:
        self.spec = spec
        self.closed = False

    def close(self) -> None:
        self.closed = True


def spec(case: str) -> SandboxSpec:
    return SandboxSpec(run_id="r", case_id=case, data_root=Path("/nonexistent"), inputs=(), workspace=Path("/nonexistent"))


def test_prefetched_sandbox_is_taken_once_for_its_own_case():
    started: list[str] = []
    pool = WarmPool(lambda s: started.append(s.case_id) or FakeSandbox(s), workers=2)
    pool.prefetch(spec("a"))
    pool.prefetch(spec("a"))  # once per case
    assert "a" in pool and "b" not in pool
    box, waited = pool.take("a")
    assert box.spec.case_id == "a" and waited >= 0 and started == ["a"]
    assert pool.take("a") == (None, 0.0) and pool.take("b") == (None, 0.0)
    assert pool.close() == 0 and not box.closed  # taken: the scheduler closes it


def test_close_tears_down_started_but_unused_sandboxes_and_waits_for_starts_in_flight():
    release = threading.Event()
    made: list[FakeSandbox] = []

    def slow_start(s):
        release.wait(5)
        made.append(FakeSandbox(s))
        return made[-1]

    pool = WarmPool(slow_start, workers=2)
    pool.prefetch(spec("a"))
    pool.prefetch(spec("b"))
    threading.Timer(0.2, release.set).start()
    assert pool.close() == 2
    assert len(made) == 2 and all(b.closed for b in made)
    pool.prefetch(spec("c"))  # closed: no new starts
    assert "c" not in pool


def test_a_failed_start_is_raised_to_the_taker_as_sandbox_error():
    def broken(s):
        raise OSError("no space left")

    pool = WarmPool(broken, workers=1)
    pool.prefetch(spec("a"))
    with pytest.raises(SandboxError, match="a: warm sandbox start failed: no space left"):
        pool.take("a")
    pool.close()
