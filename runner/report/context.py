"""What every report section reads: the runs, their rows grouped by configuration, and the
report's settings (bootstrap seed and resamples, pass threshold, prices)."""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from runner.paradigms import PARADIGMS
from runner.report.floors import Floors, floors_of
from runner.report.prices import Prices
from runner.report.rows import InstanceRow, RunData

OVERALL = "overall"


@dataclass(frozen=True)
class Settings:
    """How the statistics are computed; printed with the report so they can be reproduced."""

    resamples: int = 2000
    seed: int = 0
    pass_threshold: float = 100.0  # an instance run passes (pass@k) at this score or above
    prices: Prices | None = None


@dataclass(frozen=True)
class Configuration:
    """One (model, paradigm): what a leaderboard row is. Several runs may hold one (repeats)."""

    model: str
    paradigm: str

    @property
    def label(self) -> str:
        """model · paradigm."""
        return f"{self.model} · {self.paradigm}"


@dataclass
class ReportContext:
    """The loaded runs (already restricted to the compared cases) and the report settings."""

    runs: list[RunData]
    settings: Settings = field(default_factory=Settings)

    @property
    def rows(self) -> list[InstanceRow]:
        """Every row of every run, in run order."""
        return [row for run in self.runs for row in run.rows]

    @cached_property
    def floors(self) -> Floors:
        """Every case's guessing floor (chance, best constant answer), read once."""
        return floors_of(self.runs)

    def configurations(self) -> list[Configuration]:
        """The (model, paradigm) pairs, by model in first-seen order, then by paradigm in
        registry order (codeact before tools before hybrid...)."""
        seen: dict[Configuration, None] = {}
        for run in self.runs:
            seen.setdefault(Configuration(run.info.model, run.info.paradigm), None)
        models = list(dict.fromkeys(c.model for c in seen))
        return sorted(seen, key=lambda c: (models.index(c.model), paradigm_rank(c.paradigm)))

    def config_rows(self, config: Configuration) -> list[InstanceRow]:
        """The rows of every run of one configuration."""
        return [row for run in self.runs if (run.info.model, run.info.paradigm) == (config.model, config.paradigm)
                for row in run.rows]

    def config_runs(self, config: Configuration) -> list[RunData]:
        """The runs of one configuration, in the order given."""
        return [run for run in self.runs if (run.info.model, run.info.paradigm) == (config.model, config.paradigm)]

    def subsets(self) -> list[str]:
        """Subset names in first-seen order."""
        return list(dict.fromkeys(row.subset for row in self.rows))

    def paradigm_pairs(self) -> list[tuple[Configuration, Configuration]]:
        """For each model with several paradigms: (A, B) pairs, A earlier in registry order."""
        configs = self.configurations()
        return [(a, b) for i, a in enumerate(configs) for b in configs[i + 1:]
                if a.model == b.model and a.paradigm != b.paradigm]


def paradigm_rank(name: str) -> int:
    """A paradigm's place in the registry (unknown ones last)."""
    names = list(PARADIGMS.names())
    return names.index(name) if name in names else len(names)


def slug(text: str) -> str:
    """A column-key-safe form of a subset name ("Sleep Assessment" -> "sleep_assessment")."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "x"


def scored(rows: Iterable[InstanceRow]) -> list[InstanceRow]:
    """The rows that count in scores (infra_error left out)."""
    return [row for row in rows if row.scored]


def mean(values: Sequence[float]) -> float | None:
    """The plain mean, None for no values."""
    return sum(values) / len(values) if values else None
