"""Executors by name: `get_executor("threads")` (runner/run/executors/base.py: the contract)."""
from __future__ import annotations

from collections.abc import Callable

from extensions.registry import Registry, lazy
from runner.run.executors.base import Executor

EXECUTORS: Registry[Callable[[], Executor]] = Registry("executor")

EXECUTORS.register("threads", lazy("runner.run.executors.threads", "ThreadExecutor"))
EXECUTORS.register("ray", lazy("runner.run.executors.ray_cluster", "RayExecutor"))


def get_executor(name: str) -> Executor:
    """Build the executor registered as `name`; UnknownName lists the known ones."""
    return EXECUTORS.get(name)()
