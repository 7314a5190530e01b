"""The sandbox contract as importable checks, held to every registered backend.

Each check takes a `Context` (the backend under test, built by a factory, and the sandboxes
the checks share) and raises AssertionError when the backend fails it: hostile cells (network,
host files, the Docker socket, /proc/1/environ, other workspaces), limits (memory, processes,
CPU), timeouts and restarts, state across cells, artifacts, teardown. Besides the `Sandbox`
and `Backend` contract, the checks use the host-side inspection calls of runner/sandbox/base.py
(host_pids, leftovers, kernel_pid, own_state, kernel_python, kernel_command).

    with Context(lambda: get_backend("local"), workdir) as ctx:
        for check in CHECKS:
            check(ctx)

tests/runner/sandbox/test_conformance.py runs CHECKS for every name in runner.sandbox.BACKENDS.
"""
from __future__ import annotations

from runner.sandbox.conformance import execute, isolation, lifecycle, recovery
from runner.sandbox.conformance.context import REGISTERED, Check, Context, make_spec, run

MODULES = (execute, isolation, recovery, lifecycle)  # where the checks are defined, in suite order
CHECKS: tuple[Check, ...] = tuple(c for m in MODULES for c in REGISTERED if c.run.__module__ == m.__name__)


def by_name(name: str) -> Check:
    """One check of the suite (KeyError when there is none of that name)."""
    for made in CHECKS:
        if made.name == name:
            return made
    raise KeyError(f"no conformance check {name!r}")


__all__ = ["CHECKS", "MODULES", "Check", "Context", "by_name", "make_spec", "run"]
