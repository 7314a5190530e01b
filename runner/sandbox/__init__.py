"""Sandbox backends by name: `get_backend("local")`, `get_backend("docker")`."""
from __future__ import annotations

from collections.abc import Callable

from runner.sandbox.base import Backend, SandboxError


def _local() -> Backend:
    from runner.sandbox.local import LocalBackend

    return LocalBackend()


def _docker() -> Backend:
    from runner.sandbox.docker import DockerBackend

    return DockerBackend()


# name -> factory; factories import lazily so a backend's dependencies load only when used.
BACKENDS: dict[str, Callable[[], Backend]] = {"local": _local, "docker": _docker}


def get_backend(name: str) -> Backend:
    try:
        factory = BACKENDS[name]
    except KeyError:
        raise SandboxError(f"unknown sandbox backend {name!r}; known: {', '.join(sorted(BACKENDS))}") from None
    return factory()


SANDBOX_CHOICES = ("auto", "local", "docker")


def sandbox_choices() -> tuple[str, ...]:
    """What SANDBOX= accepts: auto and every registered backend."""
    return ("auto", *BACKENDS)


def choose_backend(name: str) -> tuple[Backend, str]:
    """The backend for SANDBOX=name, and why (for the run log); `auto` takes docker when the
    daemon answers and the kernel image exists, else local."""
    if name != "auto":
        backend = get_backend(name)
        return backend, f"asked for {name}: {backend.available()[1]}"
    docker = get_backend("docker")
    ok, why = docker.available()
    if ok:
        return docker, f"auto: docker is available ({why})"
    backend = get_backend("local")
    return backend, f"auto: docker not usable ({why}); local: {backend.available()[1]}"
