"""Executors by name: `EXECUTORS.get("threads")` (runner/run/executors/base.py: the contract)."""
from __future__ import annotations

from runner.core.registry import Registry
from runner.run.executors.base import Executor

EXECUTORS: Registry[Executor] = Registry("executor")


def _threads() -> Executor:
    from runner.run.executors.threads import ThreadExecutor

    return ThreadExecutor()


EXECUTORS.register("threads", _threads)


def _ray() -> Executor:
    from runner.run.executors.ray_cluster import RayExecutor

    return RayExecutor()


EXECUTORS.register("ray", _ray)
