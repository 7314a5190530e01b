"""The tools paradigm's environment: an instance's recordings on the host, behind eegtools.

Tools run in the controller process (trusted, deterministic code); the model supplies only
JSON arguments, which the registry validates against each tool's schema. Record ids are
the inputs' data-root-relative paths, exactly as the task lists them.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import eegtools
from eegtools import ToolError
from validation.instance import Instance, sandbox_path

SFREQ_KEYS = ("sfreq", "sampling_rate", "sampling_rate_hz")  # agent_input fields declaring a .npy's rate


@dataclass(frozen=True)
class ToolResult:
    """One tool call's outcome as the loop records it: the text the model sees and its status."""

    text: str  # what the model sees (compact JSON, truncated at the character cap)
    ok: bool
    error_code: str | None
    truncated_chars: int
    duration_s: float


class Toolbox:
    """The eegtools registry bound to one instance's records and the tool-output budget."""

    def __init__(self, instance: Instance, data_root: Path, budget_tokens: int) -> None:
        self.instance = instance
        self.data_root = Path(data_root)
        self.budget_tokens = budget_tokens
        data = instance.agent_input.data_path
        self.records: list[str] = [data] if isinstance(data, str) else list(data)
        # Results are refused above the budget before computing; the cap only guards the
        # fixed-size answers (error messages, metadata) against pathological inputs.
        self.max_chars = budget_tokens * eegtools.budget.CHARS_PER_TOKEN + 2000

    def resolve(self, record: str | None) -> eegtools.Recording:
        """A record id (the listed id, its /input/ path or its file name) -> the loaded recording."""
        if record is None:
            if len(self.records) == 1:
                return self._load(self.records[0])
            raise ToolError("bad_argument", f"record: this task has {len(self.records)} records, name one of {self.records}", argument="record")
        for rel in self.records:
            if record in (rel, sandbox_path(rel), Path(rel).name):
                return self._load(rel)
        raise ToolError("bad_argument", f"record: {record!r} is not a record of this task; records: {self.records}", argument="record")

    def _load(self, rel: str) -> eegtools.Recording:
        """Through the cache; a .npy takes the sampling rate the instance declares, if any."""
        declared = None
        if rel.lower().endswith(".npy"):
            extras = self.instance.agent_input.model_extra or {}
            declared = next((extras[k] for k in SFREQ_KEYS if isinstance(extras.get(k), (int, float))), None)
        return eegtools.load_recording(self.data_root / rel, sfreq=declared)

    def describe_records(self) -> list[str]:
        """One line per record with its metadata (the paper gives it at episode start)."""
        lines: list[str] = []
        for rel in self.records:
            try:
                info = eegtools.get_recording_info(self._load(rel))
                lines.append(
                    f"{rel}: {info['n_channels']} channels, {info['sampling_rate_hz']:g} Hz, "
                    f"{info['duration_s']:g} s ({info['n_samples']} samples)"
                )
            except ToolError as exc:
                lines.append(f"{rel}: not readable by the tools ({exc.message})")
            except Exception as exc:  # a corrupt input must not take the run down with it
                lines.append(f"{rel}: not readable by the tools ({type(exc).__name__}: {exc})"[:300])
        return lines

    def call(self, name: str, arguments: dict[str, Any] | str) -> ToolResult:
        """Run one tool request; never raises: bad requests and tool failures become error results."""
        started = time.perf_counter()
        if isinstance(arguments, str):
            result: dict[str, Any] = ToolError("bad_argument", f"arguments: not a JSON object: {arguments[:200]!r}", argument="arguments").to_dict()
        else:
            result = self._run(name, arguments)
        text = json.dumps(result, separators=(",", ":"), ensure_ascii=False)
        cut = max(0, len(text) - self.max_chars)
        if cut:
            text = text[: self.max_chars] + f"... [{cut} characters cut]"
        error = result.get("error") if isinstance(result, dict) else None
        return ToolResult(
            text=text,
            ok=error is None,
            error_code=error.get("code") if isinstance(error, dict) else None,
            truncated_chars=cut,
            duration_s=round(time.perf_counter() - started, 4),
        )

    def _run(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            return eegtools.call_tool(name, arguments, self.resolve, budget_tokens=self.budget_tokens)
        except Exception as exc:  # a tool bug or an unreadable file must not end the instance
            message = f"{name} failed on these arguments: {type(exc).__name__}: {exc}"[:500]
            return ToolError("unsupported", message, argument=None).to_dict()
