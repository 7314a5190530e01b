"""A user's price file: dollars per million input and output tokens, per model name.

    # prices.toml
    [models."gpt-4o-2024-08-06"]
    input = 2.50    # $ per 1M prompt tokens
    output = 10.00  # $ per 1M completion tokens

eegbench ships no prices: they change, and a report states the file it used.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from validation.errors import UserError


class PriceFileError(UserError, ValueError):
    """The price file is missing, not TOML, or a price is not a non-negative number."""


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens."""

    input: float
    output: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """What these tokens cost, in dollars."""
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1e6


@dataclass(frozen=True)
class Prices:
    """The price of each model named in the file."""

    source: str
    models: dict[str, Price]

    def cost(self, model: str | None, prompt_tokens: int, completion_tokens: int) -> float | None:
        """Dollars for a model's tokens; None when the file has no price for it."""
        price = self.models.get(model or "")
        return None if price is None else price.cost(prompt_tokens, completion_tokens)


def load_prices(path: Path) -> Prices:
    """Read and check a price file."""
    try:
        import tomllib
    except ImportError as exc:  # Python 3.10
        raise PriceFileError("--prices needs Python 3.11 or later (tomllib)") from exc
    if not path.is_file():
        raise PriceFileError(f"--prices: no file {path}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise PriceFileError(f"--prices {path}: not TOML: {exc}") from exc
    models = data.get("models")
    if not isinstance(models, dict) or not models:
        raise PriceFileError(f"--prices {path}: expected a [models.\"NAME\"] table with input and output")
    return Prices(source=str(path), models={str(name): _price(path, str(name), entry)
                                            for name, entry in models.items()})


def _price(path: Path, name: str, entry: object) -> Price:
    if not isinstance(entry, dict):
        raise PriceFileError(f"--prices {path}: models.{name} must be a table with input and output")
    return Price(input=_number(path, name, entry, "input"), output=_number(path, name, entry, "output"))


def _number(path: Path, name: str, entry: dict[str, object], key: str) -> float:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise PriceFileError(f"--prices {path}: models.{name}.{key} must be a non-negative number, got {value!r}")
    return float(value)
