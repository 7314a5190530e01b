"""A person at the keyboard as the model: MODEL=human.

The person sees what a model would (the system prompt once, the instance's message, each
observation) on the terminal, and types or pastes the reply: an <execute> or <solution> block,
which ends at its closing tag, or text that ends at an empty line (the tools and BrainAgent
paradigms' JSON actions). A reply with neither a block nor a JSON object is refused at once with
a message, and the person types it again; it costs no turn. The instance is then recorded, limited and scored as any model's: each
turn's time on task is its latency, its reply the text as typed (no keystrokes).

Ctrl-C stops the run as it stops any run: the instance under way is not recorded, and rerunning
the same command (RUN=name) resumes with it. Sessions take turns at the one terminal (a lock),
each prompt naming its case; an end of input (Ctrl-D) ends the instance as an infrastructure
failure, which a resume retries.
"""
from __future__ import annotations

import json
import re
import select
import sys
import threading
import time
from typing import TextIO

from runner.core.paths import Environment
from runner.core.settings import ModelSettings
from runner.core.transcript import Usage
from runner.models.base import Completion, Message, Model, ModelError, ModelSession
from validation.instance import Instance

ACTION = re.compile(r"<(execute|solution)>", re.IGNORECASE)
CLOSING = re.compile(r"</(execute|solution)>", re.IGNORECASE)
POLL_S = 0.2  # how often a wait for the person's input checks whether the run is stopping
NO_ACTION = ("no action in that reply: write <execute>code</execute> to run code or <solution>report</solution> "
             "to answer (tools and BrainAgent: a JSON action, then an empty line); type it again")


class HumanModel(Model):
    """The person at this terminal."""

    name = "human"

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout  # None: sys.stdout when printing (the progress display may redirect it)
        self.terminal = threading.Lock()  # one session asks at a time
        self.closed = threading.Event()

    def session(self, instance: Instance) -> ModelSession:
        """A conversation with the person about `instance`."""
        return HumanSession(self, instance.case_id)

    def close(self) -> None:
        """Stop waiting for input (the run is stopping)."""
        self.closed.set()


class HumanSession(ModelSession):
    """Shows each new message, then reads one reply."""

    def __init__(self, model: HumanModel, case_id: str) -> None:
        self.model = model
        self.case_id = case_id
        self.shown = 0
        self.turn = 0

    def complete(self, messages: list[Message]) -> Completion:
        """The person's reply to `messages`; latency is their time on task."""
        with self.model.terminal:
            self._show(messages[self.shown:])
            self.shown = len(messages) + 1  # the reply is appended next
            self.turn += 1
            started = time.monotonic()
            reply = self._read_reply()
        return Completion(text=reply, usage=Usage(), latency_s=round(time.monotonic() - started, 3))

    def _show(self, messages: list[Message]) -> None:
        for message in messages:
            role = str(message.get("role"))
            heading = "instructions" if role == "system" else ("you" if role == "assistant" else self.case_id)
            self._say(f"\n── {heading} ──\n{message.get('content') or ''}")

    def _read_reply(self) -> str:
        while True:
            self._say(f"\n── your reply ({self.case_id}, turn {self.turn}): an <execute> or <solution> block "
                      "(it ends at its closing tag), or a JSON action and an empty line ──")
            reply = self._read_block()
            if ACTION.search(reply) or _json_object(reply):
                return reply
            self._say(NO_ACTION)

    def _read_block(self) -> str:
        """Lines up to a closing tag, or up to an empty line when no block is open (code
        inside a block may hold empty lines); empty lines before any text are skipped."""
        lines: list[str] = []
        while True:
            line = self._read_line()
            if not line.strip() and not ACTION.search("".join(lines)):
                if lines:
                    break
                continue
            lines.append(line)
            if CLOSING.search(line):
                break
        return "".join(lines).strip("\n")

    def _read_line(self) -> str:
        while not self.model.closed.is_set():
            ready, _, _ = select.select([self.model.stdin], [], [], POLL_S)
            if not ready:
                continue
            line = self.model.stdin.readline()
            if not line:
                raise ModelError(f"human: end of input at {self.case_id}", infrastructure=True, kind="harness")
            return line
        raise ModelError("human: the run is stopping", infrastructure=True, kind="harness")

    def _say(self, text: str) -> None:
        print(text, file=self.model.stdout or sys.stdout, flush=True)


def _json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def build(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    """MODEL=human: the person at this terminal."""
    return HumanModel()
