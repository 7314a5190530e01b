"""`Registry`: a name -> item map for one kind of extension, in registration order.

Registering is one call in the module that defines the extension, and whatever offers a
choice (the CLI's `choices`, RunConfig's check, error messages, generated docs) reads
`names()`, so the list of choices cannot drift from what exists. The item is whatever the
kind needs: a unit or a model kind is a description carrying its own behaviour, a tool is its
spec, a paradigm or a backend is a factory (`lazy` imports its module only when it is built,
so the Docker SDK loads only when the docker backend is).

An unknown name raises the registry's own error: `UnknownName` by default, or what the kind
words itself (a metric type's MetricConfigError, a tool's ToolError for the model).
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

# (the unknown name, the registered names) -> the error to raise
Unknown = Callable[[str, tuple[str, ...]], Exception]


class UnknownName(ValueError):
    """A name no extension of the kind is registered under; the message lists the known ones.

    The `eegbench` command reports it as wrong input (exit 2), as it does a UserError."""


class Registry(Generic[T]):
    """Name -> item for one kind of extension (e.g. "sandbox backend")."""

    def __init__(self, kind: str, *, unknown: Unknown | None = None) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._unknown = unknown or self._unknown_name

    def register(self, name: str, item: T) -> T:
        """Add an extension and return it; registering a name twice is a bug and raises."""
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = item
        return item

    def unregister(self, name: str) -> None:
        """Remove an extension (tests that register a toy one clean up with this)."""
        self._items.pop(name, None)

    def replace(self, name: str, item: T) -> T:
        """Put `item` in the place of the registered one and return that one (a test that
        alters an extension restores it with this; the order of names is kept)."""
        old = self.get(name)
        self._items[name] = item
        return old

    def get(self, name: str) -> T:
        """The item registered under `name`; the registry's error names the known ones."""
        try:
            return self._items[name]
        except (KeyError, TypeError):  # TypeError: an unhashable name from a model's JSON
            raise self._unknown(name, self.names()) from None

    def names(self) -> tuple[str, ...]:
        """Registered names, in registration order."""
        return tuple(self._items)

    def items(self) -> tuple[T, ...]:
        """Registered items, in registration order."""
        return tuple(self._items.values())

    def __contains__(self, name: object) -> bool:
        try:
            return name in self._items
        except TypeError:
            return False

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def _unknown_name(self, name: str, known: tuple[str, ...]) -> Exception:
        return UnknownName(f"unknown {self.kind} {name!r}; known: {', '.join(known)}")


@dataclass(frozen=True)
class Lazy:
    """A callable that imports `module` when first called and calls its `attribute` with the
    same arguments: a registered factory that costs nothing until it is used."""

    module: str
    attribute: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Import the module if need be and call the attribute."""
        return self.target()(*args, **kwargs)

    def target(self) -> Callable[..., Any]:
        """The attribute itself (imports its module)."""
        found: Callable[..., Any] = getattr(importlib.import_module(self.module), self.attribute)
        return found


def lazy(module: str, attribute: str) -> Lazy:
    """`module.attribute`, imported when first called (see Lazy)."""
    return Lazy(module, attribute)
