"""What a task spec declares about leak-resistant variants (`"variants"` in its JSON): for every
transformation, whether the task stays meaningful under it (safe) or not (unsafe, with why),
and which binding params name channels or times, so a transformation can carry them along."""
from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

TransformName = Literal["permute_channels", "rename_channels", "time_offset", "unit_change", "polarity",
                        "noise", "shift_window"]
TRANSFORMS: tuple[str, ...] = get_args(TransformName)


class VariantRules(BaseModel):
    """Every transformation declared once: safe, or unsafe with the reason."""
    model_config = ConfigDict(extra="forbid")
    safe: list[TransformName] = Field(min_length=1)
    unsafe: dict[TransformName, str] = Field(default_factory=dict)
    channel_params: list[str] = Field(default_factory=list)  # params whose strings are channel names
    time_params: list[str] = Field(default_factory=list)  # params in seconds from the recording's start
    length_params: list[str] = Field(default_factory=list)  # a window's length after each time (start_s + length_s)

    @model_validator(mode="after")
    def _each_declared_once(self) -> "VariantRules":
        both = set(self.safe) & set(self.unsafe)
        if both:
            raise ValueError(f"declared both safe and unsafe: {sorted(both)}")
        missing = set(TRANSFORMS) - set(self.safe) - set(self.unsafe)
        if missing:
            raise ValueError(f"transformations not declared safe or unsafe: {sorted(missing)}")
        return self
