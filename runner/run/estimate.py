"""What a run will ask of the model, before it starts: `eegbench eval --dry-run`.

Two figures per run, from each instance's first request (the paradigm's own messages and tool
schemas, counted as the rate limiter counts them: runner/models/base.py's prompt_tokens) and the
run's limits:
- lower bound: every instance answered in its first call. No run asks less.
- typical: what the paradigm says (Paradigm.typical_calls): half its turn ceiling, each turn
  adding to the prompt half the reply limit and half the observation budget (a cell output's
  or a tool result's); BrainAgent: the supervisor's two turns (delegate, report) around one
  objective of half its planning rounds. A rule of thumb from the limits, not a measurement: a model that stops early costs less, one
  that spends every turn (and EEGAgentBench's paper saw totals of 7 to 600 million prompt tokens
  over its 1,072 instances, depending on the model) more.
Prompts are re-sent each turn, so prompt tokens grow with the square of the turns; completion
tokens are the reply limit's half per call. Cost follows EEGAgentBench's equation: tokens in
millions times the input and output prices, no cached-input discount.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from runner.core.settings import ControlLimits
from runner.models.base import prompt_tokens
from runner.paradigms.base import Paradigm
from validation.errors import UserError
from validation.instance import Instance

DEFAULT_REPLY_TOKENS = 2048  # the reply limit assumed when --max-tokens is not given


@dataclass(frozen=True)
class Usage:
    """Model calls and their tokens."""

    calls: int
    prompt_tokens: int
    completion_tokens: int

    def cost(self, prices: Prices) -> float:
        """USD at the given prices per million tokens."""
        return (self.prompt_tokens * prices.input + self.completion_tokens * prices.output) / 1e6


@dataclass(frozen=True)
class Prices:
    """USD per million input (prompt) and output (completion) tokens."""

    input: float
    output: float

    @classmethod
    def parse(cls, text: str) -> Prices:
        """'IN,OUT', e.g. '2.5,10'; UserError names --prices and what is wrong."""
        parts = [p.strip() for p in text.split(",")]
        try:
            values = [float(p) for p in parts]
        except ValueError:
            values = []
        if len(values) != 2 or not all(math.isfinite(v) and v >= 0 for v in values):
            raise UserError(f"--prices {text!r}: expected two non-negative numbers IN,OUT in USD per million "
                            "tokens, e.g. --prices 2.5,10")
        return cls(values[0], values[1])


@dataclass(frozen=True)
class RunEstimate:
    """The lower bound and the typical figure of one run."""

    instances: int
    first_prompt_tokens: dict[str, int]  # case id -> its first request's prompt tokens
    lower: Usage
    typical: Usage


def estimate(paradigm: Paradigm, instances: list[Instance], controls: ControlLimits, data_root: Path,
             reply_tokens: int | None, epochs: int = 1) -> RunEstimate:
    """The run's calls and tokens (module doc); reads each instance's records, calls nothing."""
    reply = reply_tokens or DEFAULT_REPLY_TOKENS
    first = {}
    for instance in instances:
        request = paradigm.first_request(instance, controls, data_root)
        first[instance.case_id] = prompt_tokens(request.messages, request.tools)
    turns, growth = paradigm.typical_calls(controls, reply)
    lower = Usage(len(first), sum(first.values()), len(first))
    typical = Usage(turns * len(first), sum(grown(tokens, turns, growth) for tokens in first.values()),
                    turns * len(first) * (reply // 2))
    return RunEstimate(len(first) * epochs, first, scaled(lower, epochs), scaled(typical, epochs))


def grown(first: int, turns: int, growth: int) -> int:
    """Prompt tokens of `turns` calls when each re-sends the last with `growth` more."""
    return turns * first + growth * turns * (turns - 1) // 2


def scaled(usage: Usage, epochs: int) -> Usage:
    """The usage of `epochs` repeats."""
    return Usage(usage.calls * epochs, usage.prompt_tokens * epochs, usage.completion_tokens * epochs)
