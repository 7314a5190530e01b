"""Sandbox backends by name: one registry that SANDBOX=, the CLI's choices and RunConfig read.

Adding a backend is one `BACKENDS.register(name, factory)` call; the conformance suite
(runner/sandbox/conformance/, run by tests/runner/sandbox/test_conformance.py) then holds it
to the same checks as the others. Factories import lazily: the Docker SDK loads only when the
docker backend is built.
"""
from __future__ import annotations

import os
from collections.abc import Callable

from extensions.registry import Registry, lazy
from runner.sandbox.base import Backend

AUTO = "auto"
AUTO_FIRST, AUTO_FALLBACK = "docker", "local"  # what SANDBOX=auto tries, in order

BACKENDS: Registry[Callable[[], Backend]] = Registry("sandbox backend")


BACKENDS.register("local", lazy("runner.sandbox.local", "LocalBackend"))
BACKENDS.register("docker", lazy("runner.sandbox.docker", "DockerBackend"))


def backend_names() -> tuple[str, ...]:
    """The registered backends, in registration order."""
    return BACKENDS.names()


def sandbox_choices() -> tuple[str, ...]:
    """What SANDBOX= (and --sandbox) accepts: auto, then every registered backend."""
    return (AUTO, *BACKENDS.names())


def get_backend(name: str) -> Backend:
    """Build the backend registered as `name`; UnknownName lists the known ones."""
    backend = BACKENDS.get(name)()
    if not isinstance(backend, Backend):
        raise TypeError(f"sandbox backend {name!r} built {type(backend).__name__}, not a Backend")
    return backend


def choose_backend(name: str) -> tuple[Backend, str]:
    """The backend for SANDBOX=name, and why (for the run log); `auto` takes docker when the
    controller is root, the daemon answers and the kernel image exists, else local (a
    user's Docker could run sandboxes, but not bound their workspaces)."""
    if name != AUTO:
        backend = get_backend(name)
        return backend, f"asked for {name}: {backend.available()[1]}"
    if os.geteuid() != 0:
        backend = get_backend(AUTO_FALLBACK)
        return backend, f"auto: {AUTO_FALLBACK} (not root: {AUTO_FIRST} is for root): {backend.available()[1]}"
    first = get_backend(AUTO_FIRST)
    ok, why = first.available()
    if ok:
        return first, f"auto: {AUTO_FIRST} is available ({why})"
    backend = get_backend(AUTO_FALLBACK)
    return backend, f"auto: {AUTO_FIRST} not usable ({why}); {AUTO_FALLBACK}: {backend.available()[1]}"
