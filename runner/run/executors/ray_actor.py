"""The worker side of the Ray executor: one long-lived actor per sandbox slot.

Each actor builds its own sandbox backend, model client and paradigm from the run's
WorkerSpec, keeps a warm pool of one (the next instance the driver promised it), runs whole
instances and returns each as a Bundle. `stop` runs beside a `work` call (the actor has two
threads): it closes the running sandbox and the model, which makes `work` return, and
answers only once that is done, so the driver's Ctrl-C waits for real teardown rather than
relying on Ray's task cancel (which does not interrupt a blocking call).
"""
from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from runner.core.paths import Environment, Paths
from runner.models.credentials import endpoint_from_env
from runner.models.kinds import ModelSpec, build_model
from runner.paradigms import get_paradigm
from runner.run.bundle import Bundle, BundleRecorder, WorkerSpec
from runner.run.instance import InstanceParts, InstanceRunner
from runner.run.preflight import Fingerprint, NodeCheck, check_node
from runner.run.records import key_of
from runner.sandbox import choose_backend, jit_cache
from validation.errors import UserError
from validation.instance import Instance

log = logging.getLogger(__name__)


def worker_data_root(spec: WorkerSpec) -> Path:
    """The data folder on this machine: the run's --data-root (a shared folder) when given,
    else this node's own (EEGBENCH_DATA, or the checkout's data/ that `make data` fills)."""
    if spec.config.data_root:
        return Path(spec.config.data_root)
    return Environment.from_os().paths.data_root


def preflight(spec: WorkerSpec, node: str, expected: Fingerprint) -> NodeCheck:
    """The node's pre-flight (runner/run/preflight.py), run on that node, and whether the
    node holds the endpoint's key (which never travels with the spec)."""
    paradigm = get_paradigm(spec.config.paradigm)
    backend, _ = choose_backend(spec.config.sandbox)
    check = check_node(node, backend, paradigm.needs_sandbox, worker_data_root(spec), expected)
    problem = endpoint_problem(spec, Environment.from_os().variables)
    if problem:
        check.problems.append(problem)
    return check


def endpoint_problem(spec: WorkerSpec, node_env: Mapping[str, str]) -> str | None:
    """Why this node cannot reach the run's endpoint (an openai model's key is missing or its
    key file unreadable here), or None."""
    if not ModelSpec.parse(spec.config.model).model_kind.remote:
        return None
    try:
        endpoint_from_env({**node_env, **spec.variables})
    except UserError as exc:
        return (f"{exc}: the key is read on each node, never sent; set it in the node's environment "
                "before `ray start`, or name a key file readable there")
    return None


class SharedLimiter:
    """A Limiter whose state lives in one Ray actor (an EndpointLimiter), so --max-connections,
    --rpm and --tpm hold across every worker of the run. Picklable: it holds the handle."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def try_acquire(self, tokens: int) -> float:
        """The shared limiter's answer (0.0: granted; else seconds to wait)."""
        import ray

        return float(ray.get(self._handle.try_acquire.remote(tokens)))

    def release(self, tokens_used: int) -> None:
        """Free the connection in the shared limiter (waits, so a release precedes the next ask)."""
        import ray

        ray.get(self._handle.release.remote(tokens_used))

    def pause(self, seconds: float) -> None:
        """Pause the shared limiter: every worker of the run waits out a Retry-After."""
        import ray

        ray.get(self._handle.pause.remote(seconds))


class InstanceActor:
    """A sandbox slot on some node of the cluster."""

    def __init__(self, spec: WorkerSpec, node: str) -> None:
        logging.getLogger().setLevel(logging.INFO)  # controller.log takes INFO records
        variables = {**Environment.from_os().variables, **spec.variables}
        env = Environment(paths=Paths.from_environ(variables), variables=variables)
        paradigm = get_paradigm(spec.config.paradigm)
        backend, _ = choose_backend(spec.config.sandbox)
        model = build_model(spec.config.model, env=env, settings=spec.config.model_settings)
        if spec.limiter is not None and hasattr(model, "limiter"):
            model.limiter = spec.limiter  # one endpoint budget for the whole cluster
        compiled, why = jit_cache.resolve(env.paths.cache_dir, backend)
        if compiled is None:
            log.warning("%s", why)
        parts = InstanceParts(model=model, paradigm=paradigm, backend=backend, data_root=worker_data_root(spec),
                              jit_cache=compiled)
        self.runner = InstanceRunner(spec.config, spec.run_id, parts, warm_slots=1,
                                     where=f" on Ray node {node[:12]}, worker pid {os.getpid()}")

    def ready(self) -> int:
        """The actor's process id, once it is built."""
        return os.getpid()

    def work(self, unit: Instance, upcoming: Instance | None) -> Bundle | None:
        """Run `unit`; start `upcoming`'s sandbox meanwhile (with --warm-pool). None when
        stopped mid-instance (nothing to record: it reruns on resume)."""
        if upcoming is not None:
            self.runner.prefetch(upcoming)
        recorder = BundleRecorder(self.runner.scratch_dir())
        try:
            attempt = self.runner.work(unit, recorder)
            if attempt is None:
                return None
            return recorder.bundle(key_of(unit), self.runner.parts.paradigm.name, attempt)
        finally:
            recorder.remove()

    def stop(self) -> list[str]:
        """Close the running sandbox, the warm one and the model; the entry keys closed."""
        return self.runner.abort()

    def shutdown(self) -> None:
        """The run is over: the warm pool, the model and this worker's workspaces."""
        self.runner.close_pool()
        self.runner.parts.model.close()
        self.runner.remove_scratch()
