"""shared_state: the kernel-side store every tool reads from and writes to, by id.

Branches (BrainBench's BrainAgent, appendix D.2.1): recordings, views (derived signals and
epochs), labels (hypnograms, segment labels), events (event and detection tables), results
(analysis values), artifacts (written files), and planning (executed-tool counts and the
recent call signatures, for repeat detection). Ids are a branch prefix and a counter that
never goes back (`sig3`), so they cannot collide within a kernel's life. A kernel restart
empties the state, and an id from before it is then unknown.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, Literal

from braintools.errors import ToolError

Branch = Literal["recordings", "views", "labels", "events", "results", "artifacts"]
BRANCHES: tuple[Branch, ...] = ("recordings", "views", "labels", "events", "results", "artifacts")
RECENT_CALLS = 20


@dataclass
class Entry:
    """One registered object: where it lives, what made it, and what the agent is shown."""

    id: str
    branch: Branch
    kind: str
    value: Any
    info: dict[str, Any]  # the bounded description (value.describe(), or a result's summary)
    made_by: str  # the tool call that registered it: "filter_signal(source=sig1)"


@dataclass
class Planning:
    """The planning branch: how often each tool ran and the recent call signatures."""

    tool_counts: Counter[str] = field(default_factory=Counter)
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=RECENT_CALLS))
    repeats: Counter[str] = field(default_factory=Counter)

    def note(self, tool: str, arguments: dict[str, Any]) -> int:
        """Record one call; how many times this exact call (tool and arguments) has run."""
        signature = call_signature(tool, arguments)
        self.tool_counts[tool] += 1
        self.recent.append(signature)
        self.repeats[signature] += 1
        return self.repeats[signature]


class SharedState:
    """The store: entries by id, per-prefix counters, the planning branch."""

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.counters: Counter[str] = Counter()
        self.planning = Planning()

    def add(self, branch: Branch, prefix: str, value: Any, info: dict[str, Any], made_by: str) -> Entry:
        """Register `value` under a fresh id with `prefix`."""
        self.counters[prefix] += 1
        entry = Entry(f"{prefix}{self.counters[prefix]}", branch, str(info.get("kind", prefix)), value, info, made_by)
        self.entries[entry.id] = entry
        return entry

    def get(self, entry_id: object, argument: str, kinds: tuple[type, ...] | None = None) -> Entry:
        """The entry `entry_id`; ToolError unknown_id, or wrong_kind when its value is not one of `kinds`."""
        if not isinstance(entry_id, str) or entry_id not in self.entries:
            known = ", ".join(list(self.entries)[-12:]) or "none yet"
            raise ToolError("unknown_id", f"{argument}: no shared_state entry {entry_id!r} (recent ids: {known})", argument=argument)
        entry = self.entries[entry_id]
        if kinds is not None and not isinstance(entry.value, kinds):
            wanted = " or ".join(k.__name__.lower() for k in kinds)
            raise ToolError("wrong_kind", f"{argument}: {entry_id} is a {entry.kind}, this needs a {wanted}", argument=argument)
        return entry

    def summary(self, max_chars: int = 4000) -> str:
        """The id-based view the agent gets before each planning round, at most `max_chars`."""
        lines = [f"shared_state: {len(self.entries)} entries"]
        for branch in BRANCHES:
            ids = [e for e in self.entries.values() if e.branch == branch]
            if not ids:
                continue
            lines.append(f"[{branch}] {len(ids)}")
            lines += [f"  {e.id} {e.kind}: {_brief(e.info)} <- {e.made_by}" for e in ids]
        counts = ", ".join(f"{k}×{v}" for k, v in sorted(self.planning.tool_counts.items()))
        lines.append(f"[planning] tools run: {counts or 'none'}")
        return bound_lines(lines, max_chars)

    def reset(self) -> None:
        """Forget everything (tests; a kernel restart does the same by losing the process)."""
        self.__init__()  # type: ignore[misc]


def call_signature(tool: str, arguments: dict[str, Any]) -> str:
    """A short stable hash of one call (tool and canonical arguments)."""
    text = json.dumps([tool, arguments], sort_keys=True, default=str, separators=(",", ":"))
    return f"{tool}:{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def bound_lines(lines: list[str], max_chars: int) -> str:
    """The first line, then as many of the newest lines as fit, with a count of those left out."""
    text = "\n".join(lines)
    if len(text) <= max_chars:
        return text
    head, body = lines[0], lines[1:]
    kept: list[str] = []
    used = len(head) + 40
    for line in reversed(body):
        line = line if len(line) <= 300 else line[:297] + "..."
        if used + len(line) + 1 > max_chars:
            break
        kept.append(line)
        used += len(line) + 1
    left = len(body) - len(kept)
    return "\n".join([head, f"... {left} older lines left out"] + list(reversed(kept)))


def _brief(info: dict[str, Any]) -> str:
    parts = []
    for key, value in info.items():
        if key in ("kind", "history", "head"):
            continue
        text = json.dumps(value, default=str, ensure_ascii=False, separators=(",", ":"))
        parts.append(f"{key}={text if len(text) <= 60 else text[:57] + '...'}")
    return ", ".join(parts)[:240]


STATE = SharedState()
