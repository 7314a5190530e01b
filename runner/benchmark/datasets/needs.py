"""What a task spec declares about binding it to a local dataset (`"local"` in its JSON): the
binder that chooses its params from a recording, what a recording must have for it, and the
instruction its local instances get when the packaged one names its packaged recording."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Needs(BaseModel):
    """What a recording must have for the task (every field optional)."""
    model_config = ConfigDict(extra="forbid")
    hypnogram: bool = False  # 30-s sleep stages scored by an expert
    event_kinds: list[str] = Field(default_factory=list)  # event kinds that must each occur
    min_events: int = 0  # per kind named in event_kinds
    eog: bool = False
    emg: bool = False
    min_eeg_channels: int = 1
    sfreq_hz: tuple[float, float] = (0.0, float("inf"))  # inclusive range
    min_duration_s: float = 0.0

    @model_validator(mode="after")
    def _ordered(self) -> "Needs":
        low, high = self.sfreq_hz
        if not 0 <= low <= high:
            raise ValueError(f"sfreq_hz: expected [low, high] with 0 <= low <= high, got {list(self.sfreq_hz)}")
        return self


class LocalRules(BaseModel):
    """How the task binds to a local dataset."""
    model_config = ConfigDict(extra="forbid")
    binder: str  # a name in runner.benchmark.datasets.binders.BINDERS
    needs: Needs = Field(default_factory=Needs)
    instruction: str | None = None  # None: the task's own instruction (its {recording} describes the file)
    options: dict[str, object] = Field(default_factory=dict)  # the binder's fixed choices (band, window length)
