"""Sandbox backends by name: `get_backend("local")`; the Docker backend registers here later."""
from __future__ import annotations

from collections.abc import Callable

from runner.sandbox.base import Backend, SandboxError


def _local() -> Backend:
    from runner.sandbox.local import LocalBackend

    return LocalBackend()


# name -> factory; factories import lazily so a backend's dependencies load only when used.
BACKENDS: dict[str, Callable[[], Backend]] = {"local": _local}


def get_backend(name: str) -> Backend:
    try:
        factory = BACKENDS[name]
    except KeyError:
        raise SandboxError(f"unknown sandbox backend {name!r}; known: {', '.join(sorted(BACKENDS))}") from None
    return factory()
