"""Named extension points: paradigms, sandbox backends, model kinds, executors.

A `Registry` maps a name to a factory. Registering is one call in the module that defines
the extension, and whatever offers a choice (the CLI's `choices`, RunConfig's validation,
error messages) reads `names()`, so the list of choices cannot drift from what exists.
Factories may import lazily: the Docker SDK loads only when the docker backend is built.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from validation.errors import UserError

T = TypeVar("T")


class UnknownName(UserError, ValueError):
    """A name no extension is registered under; the message lists the known ones."""


class Registry(Generic[T]):
    """Name -> factory for one kind of extension (e.g. "sandbox backend")."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._factories: dict[str, Callable[[], T]] = {}

    def register(self, name: str, factory: Callable[[], T]) -> None:
        """Add an extension; registering a name twice is a bug and raises."""
        if name in self._factories:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._factories[name] = factory

    def unregister(self, name: str) -> None:
        """Remove an extension (tests that register a toy one clean up with this)."""
        self._factories.pop(name, None)

    def get(self, name: str) -> T:
        """Build the extension registered under `name`; UnknownName lists the known names."""
        try:
            factory = self._factories[name]
        except KeyError:
            raise UnknownName(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}") from None
        return factory()

    def names(self) -> tuple[str, ...]:
        """Registered names, in registration order."""
        return tuple(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories
