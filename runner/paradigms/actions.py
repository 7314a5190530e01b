"""Reading the one action out of a model reply."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_OPEN = re.compile(r"<(execute|solution)>", re.IGNORECASE)


@dataclass(frozen=True)
class Action:
    """The reply's action: code to execute, the final solution, or none; `body` is the block's text."""

    kind: Literal["execute", "solution", "none"]
    body: str = ""


def parse_action(reply: str) -> Action:
    """The first <execute> or <solution> block wins; text outside tags is ignored.

    A block left open at the end of the reply counts (stop sequences often cut the closing tag).
    """
    match = _OPEN.search(reply or "")
    if match is None:
        return Action("none")
    kind: Literal["execute", "solution"] = "execute" if match.group(1).lower() == "execute" else "solution"
    rest = reply[match.end():]
    close = re.search(rf"</{kind}>", rest, re.IGNORECASE)
    body = rest[: close.start()] if close else rest
    return Action(kind, body.strip("\n"))
