"""The Ray executor (`--executor ray`): instances run on the nodes of a Ray cluster.

`RAY_ADDRESS` names an existing cluster; without it a local one is started for the run. The
driver (this process) keeps the run directory: it checks every node (runner/run/preflight.py),
places one long-lived actor per sandbox slot on the nodes that passed, hands each actor whole
instances, and writes, scores and records the Bundles they return, so the run directory is
the one a thread-pool run leaves. An actor lost with its node makes its instance
`infra_error` (retried on resume); Ctrl-C or SIGTERM asks every actor to stop and waits for
each to acknowledge that its sandboxes are closed.
"""
from __future__ import annotations

import logging
import math
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from runner.core.paths import Environment
from runner.run import orphans
from runner.run.bundle import Bundle, WorkerSpec
from runner.run.executors.base import Executor, Job
from runner.run.preflight import Fingerprint, NodeCheck
from validation.errors import InfrastructureError, UserError
from validation.instance import Instance

log = logging.getLogger(__name__)

POLL_S = 0.5
READY_TIMEOUT_S = 300.0  # an actor builds its backend and model client
STOP_TIMEOUT_S = 120.0  # every actor acknowledges its teardown within this
MB = 1024 * 1024


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UserError("--executor ray needs Ray: pip install -e '.[ray]'") from None
    return ray


@dataclass
class Slot:
    """One actor and what it is doing."""

    actor: Any
    node: str
    running: Any = None  # the ObjectRef of its current work call
    unit: Instance | None = None
    began: float = 0.0
    promised: Instance | None = None  # the next instance it warms a sandbox for


class RayExecutor(Executor):
    """Whole instances on Ray actors, one per sandbox slot, results on the driver."""

    name = "ray"

    def __init__(self) -> None:
        # Per instance: the driver's dispatch-to-recorded time beyond the worker's own
        # instance time (transport, bundle writing, scheduling), for `make bench`.
        self.overheads_s: list[float] = []

    def run(self, instances: list[Instance], jobs: int, job: Job, stop: threading.Event) -> None:
        """Pre-flight, place the actors, drive them; stop them all however the run ends."""
        ray = _ray()
        spec = job.worker_spec()
        with _connected(ray):
            slots = self._place(ray, spec, job, instances, jobs)
            try:
                self._drive(ray, slots, list(reversed(instances)), job, spec.config.warm_pool)
            except BaseException:
                stop.set()
                job.abort()
                _stop_all(ray, slots)
                raise
            finally:
                _shutdown_all(ray, slots)

    # -- placement ------------------------------------------------------------------------

    def _place(self, ray: Any, spec: WorkerSpec, job: Job, instances: list[Instance], jobs: int) -> list[Slot]:
        """Actors on the nodes that pass the pre-flight, as many as fit, up to `jobs`."""
        expected = job.fingerprint(instances)
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        passed = [n for n, check in zip(nodes, _preflight(ray, spec, nodes, expected)) if _say(check)]
        per_node = {n["NodeID"]: _capacity(n, spec) for n in passed}
        order = _round_robin(per_node, jobs)
        if not order:
            raise InfrastructureError(
                f"no Ray node can take a sandbox slot ({spec.config.resources.cpus} CPU, "
                f"{spec.config.resources.memory_mb} MB each): {len(passed)} of {len(nodes)} node(s) passed the pre-flight")
        if len(order) < jobs:
            log.warning("--jobs %d: the cluster's nodes hold %d sandbox slot(s); running %d", jobs, len(order), len(order))
        spec = _with_shared_limiter(ray, spec)
        remote = ray.remote(_actor_class())
        slots = [Slot(actor=_start_actor(ray, remote, spec, node), node=node) for node in order]
        try:
            pids = ray.get([s.actor.ready.remote() for s in slots], timeout=READY_TIMEOUT_S)
        except BaseException:
            _shutdown_all(ray, slots)
            raise
        for slot, pid in zip(slots, pids):
            log.info("ray: actor pid %d on node %s", pid, slot.node[:12])
        return slots

    # -- the loop -------------------------------------------------------------------------

    def _drive(self, ray: Any, slots: list[Slot], queue: list[Instance], job: Job, warm: bool) -> None:
        while queue or any(s.running is not None for s in slots) or any(s.promised for s in slots):
            live = [s for s in slots if s.actor is not None]
            if not live:
                raise InfrastructureError(f"every Ray worker was lost; {len(queue)} instance(s) not run "
                                          "(rerun with the same RUN to resume)")
            for slot in live:
                if slot.running is None:
                    _dispatch(slot, queue, warm)
            running = {s.running: s for s in live if s.running is not None}
            job.progress(len(running), [])
            ready, _ = ray.wait(list(running), num_returns=1, timeout=POLL_S)
            for ref in ready:
                slot = running[ref]
                self._collect(ray, slot, queue, job)
        job.progress(0, [])

    def _collect(self, ray: Any, slot: Slot, queue: list[Instance], job: Job) -> None:
        unit, ref, began = slot.unit, slot.running, slot.began
        slot.running, slot.unit = None, None
        assert unit is not None
        try:
            bundle: Bundle | None = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # the instance's code raised: as in a thread
            cause = exc.cause
            raise cause if isinstance(cause, Exception) else exc
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError,
                ray.exceptions.NodeDiedError, ray.exceptions.ObjectLostError) as exc:
            reason = f"Ray worker on node {slot.node[:12]} lost mid-instance ({type(exc).__name__})"
            job.result(job.lost(unit, reason, time.monotonic() - began))
            slot.actor = None
            if slot.promised is not None:
                queue.append(slot.promised)  # not started: another actor takes it
                slot.promised = None
            return
        if bundle is None:
            job.result(None)
            return
        record = job.record(bundle)
        self.overheads_s.append(time.monotonic() - began - bundle.attempt.duration_s)
        job.result(record)


def _dispatch(slot: Slot, queue: list[Instance], warm: bool) -> None:
    """Give the slot its promised instance, or the next one; promise it the one after."""
    unit = slot.promised or (queue.pop() if queue else None)
    slot.promised = None
    if unit is None:
        return
    if warm and queue:
        slot.promised = queue.pop()
    slot.unit, slot.began = unit, time.monotonic()
    slot.running = slot.actor.work.remote(unit, slot.promised)


def _preflight(ray: Any, spec: WorkerSpec, nodes: list[dict[str, Any]], expected: Fingerprint) -> list[NodeCheck]:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from runner.run.executors.ray_actor import preflight

    task = ray.remote(num_cpus=0)(preflight)
    refs = [task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False))
            .remote(spec, n["NodeID"], expected) for n in nodes]
    checks: list[NodeCheck] = []
    for node, ref in zip(nodes, refs):
        try:
            checks.append(ray.get(ref, timeout=READY_TIMEOUT_S))
        except Exception as exc:  # noqa: BLE001 - a node that cannot even answer gets no work
            checks.append(NodeCheck(node=node["NodeID"], problems=[f"pre-flight failed: {type(exc).__name__}: {exc}"]))
    return checks


def _say(check: NodeCheck) -> bool:
    """Log the node's pre-flight; True when it may take work."""
    if check.stale_collected:
        log.warning("ray node %s: collected %d leftover sandbox(es) and workspace(s)", check.node[:12],
                    check.stale_collected)
    if not check.ok:
        log.warning("ray node %s gets no work: %s", check.node[:12], "; ".join(check.problems))
    return check.ok


def _capacity(node: dict[str, Any], spec: WorkerSpec) -> int:
    """Sandbox slots a node holds: its CPUs and memory over each slot's share."""
    resources = node.get("Resources", {})
    cpus = math.floor(resources.get("CPU", 0) / spec.config.resources.cpus + 1e-9)
    memory = math.floor(resources.get("memory", 0) / (spec.config.resources.memory_mb * MB))
    return int(max(0, min(cpus, memory)))


def _round_robin(per_node: dict[str, int], jobs: int) -> list[str]:
    """Node ids, one per slot, spread across nodes."""
    left, order = dict(per_node), list[str]()
    while len(order) < jobs and any(left.values()):
        for node in list(left):
            if left[node] and len(order) < jobs:
                order.append(node)
                left[node] -= 1
    return order


def _with_shared_limiter(ray: Any, spec: WorkerSpec) -> WorkerSpec:
    """An endpoint model's limits hold across the cluster: one limiter actor for the run
    (a model with its own server per worker, or none, paces nothing shared)."""
    from runner.models.kinds import ModelSpec
    from runner.models.openai_client import limiter_options
    from runner.models.ratelimit import EndpointLimiter
    from runner.run.executors.ray_actor import SharedLimiter

    if not ModelSpec.parse(spec.config.model).model_kind.remote:
        return spec
    handle = ray.remote(EndpointLimiter).options(num_cpus=0).remote(**limiter_options(spec.config.model_settings))
    return replace(spec, limiter=SharedLimiter(handle))


def _actor_class() -> type:
    from runner.run.executors.ray_actor import InstanceActor

    return InstanceActor


def _start_actor(ray: Any, remote: Any, spec: WorkerSpec, node: str) -> Any:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    limits = spec.config.resources
    return remote.options(
        num_cpus=limits.cpus, memory=limits.memory_mb * MB, max_concurrency=2, max_restarts=0,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
    ).remote(spec, node)


def _stop_all(ray: Any, slots: list[Slot]) -> None:
    """Ask every live actor to close its sandboxes and wait for each acknowledgement, then
    for its work call to return."""
    live = [s for s in slots if s.actor is not None]
    if not live:
        return
    acks = {s.actor.stop.remote(): s for s in live}
    done, missing = ray.wait(list(acks), num_returns=len(acks), timeout=STOP_TIMEOUT_S)
    for ref in done:
        try:
            closed = ray.get(ref)
            log.info("ray node %s: closed %s", acks[ref].node[:12], ", ".join(closed) or "no sandbox")
        except Exception as exc:  # noqa: BLE001 - an actor lost meanwhile has nothing left to close
            log.warning("ray node %s: stop not acknowledged: %s", acks[ref].node[:12], exc)
    for ref in missing:
        log.error("ray node %s: no acknowledgement of the stop within %.0f s", acks[ref].node[:12], STOP_TIMEOUT_S)
    works = [s.running for s in live if s.running is not None]
    if works:
        ray.wait(works, num_returns=len(works), timeout=STOP_TIMEOUT_S)


def _shutdown_all(ray: Any, slots: list[Slot]) -> None:
    """End every actor: its warm pool, model and workspaces first, then the process."""
    live = [s for s in slots if s.actor is not None]
    if not live:
        return
    try:
        ray.wait([s.actor.shutdown.remote() for s in live], num_returns=len(live), timeout=STOP_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - the actors are killed below either way
        log.warning("ray: actor shutdown: %s", exc)
    for slot in live:
        ray.kill(slot.actor)
        slot.actor = None


@contextmanager
def _connected(ray: Any) -> Iterator[None]:
    """Connected to RAY_ADDRESS's cluster, or to a local one started for the run. Ray's
    init replaces the SIGTERM handler; the run's clean stop is put back."""
    previous = signal.getsignal(signal.SIGTERM) if threading.current_thread() is threading.main_thread() else None
    address = Environment.from_os().get("RAY_ADDRESS")
    if address is None:  # Ray's own cleanup misses agents of a cluster its driver died starting
        orphans.start_reaper()
    try:
        # "local", not None: None joins whatever cluster `ray start` last left on this machine
        ray.init(address=address or "local", include_dashboard=False, log_to_driver=False, configure_logging=False)
    except (ConnectionError, getattr(ray.exceptions, "AuthenticationError", ConnectionError)) as exc:
        raise UserError(f"RAY_ADDRESS={address}: cannot connect to a Ray cluster there ({exc}); a cluster with "
                        "token authentication needs its token here too (RAY_AUTH_MODE=token and RAY_AUTH_TOKEN, "
                        "or ~/.ray/auth_token)") from None
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
    log.info("ray: connected to %s", address or "a local cluster started for this run")
    try:
        yield
    finally:
        ray.shutdown()
