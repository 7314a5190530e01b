"""Placing sandbox slots on Ray nodes (runner/run/executors/ray_cluster.py): pure parts."""
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from runner.core.config import RunConfig
from runner.core.settings import ResourceLimits
from runner.run.bundle import WorkerSpec
from runner.run.executors import get_executor, ray_cluster
from runner.run.executors.ray_cluster import MB, _capacity, _connected, _round_robin
from validation.errors import UserError


def spec(cpus: float, memory_mb: int) -> WorkerSpec:
    config = RunConfig(run_id="r", model="oracle", resources=ResourceLimits(cpus=cpus, memory_mb=memory_mb))
    return WorkerSpec(config=config, run_id="r", data_root=Path("/data"))


def test_a_node_holds_as_many_slots_as_its_cpus_and_memory_allow():
    node = {"Resources": {"CPU": 8.0, "memory": 10_000 * MB}}
    assert _capacity(node, spec(1, 4096)) == 2  # memory bounds it
    assert _capacity(node, spec(4, 1024)) == 2  # CPUs bound it
    assert _capacity(node, spec(0.5, 512)) == 16
    assert _capacity({"Resources": {"CPU": 1.0}}, spec(1, 4096)) == 0  # no memory resource


def test_slots_spread_across_nodes_up_to_jobs():
    assert _round_robin({"a": 2, "b": 1}, 3) == ["a", "b", "a"]
    assert _round_robin({"a": 2, "b": 1}, 2) == ["a", "b"]
    assert _round_robin({"a": 2, "b": 1}, 9) == ["a", "b", "a"]
    assert _round_robin({"a": 0}, 2) == []


def test_without_ray_installed_the_executor_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(UserError, match=r"pip install -e '\.\[ray\]'"):
        get_executor("ray").run([], 1, None, threading.Event())  # type: ignore[arg-type]


@pytest.mark.parametrize(("ray_address", "joined"), [(None, "local"), ("10.0.0.1:6379", "10.0.0.1:6379")])
def test_without_ray_address_the_run_starts_its_own_cluster(monkeypatch, ray_address, joined):
    """ray.init(address=None) would join the cluster `ray start` last left on the machine
    (another user's, or a token-protected one), not start the run's own."""
    calls: list[str] = []
    fake = SimpleNamespace(init=lambda address, **_: calls.append(address), shutdown=lambda: None,
                           exceptions=SimpleNamespace())
    monkeypatch.setattr(ray_cluster.orphans, "start_reaper", lambda: None)
    if ray_address is None:
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
    else:
        monkeypatch.setenv("RAY_ADDRESS", ray_address)
    with _connected(fake):
        pass
    assert calls == [joined]
