"""MODEL=human through a real pseudo-terminal: the person sees the instruction and each
observation, types multi-line blocks, is told at once when a reply holds no action, and the
instance is recorded and scored like any model's. Ctrl-C at the prompt stops the run cleanly
(exit 130, nothing half-written) and the same command resumes it."""
from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time

import pytest

from runner.benchmark import catalog
from tests.integration.conftest import PROJECT_ROOT

pytestmark = pytest.mark.integration

CASE = "fa_alpha_relpower-01"
PROMPT = "── your reply"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal:
    """A command on a pseudo-terminal that is its controlling terminal (so ^C is a SIGINT)."""

    def __init__(self, args: list[str], env: dict) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 400, 0, 0))

        def take_terminal() -> None:
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=PROJECT_ROOT,
                                     preexec_fn=take_terminal)
        os.close(slave)
        self.seen = ""
        self.mark = 0

    def expect(self, pattern: str, timeout: float = 180) -> str:
        """Read until `pattern` appears after what the last expect matched."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.seen[self.mark:])
            if found:
                self.mark += found.end()
                return self.seen
            left = deadline - time.monotonic()
            assert left > 0, f"no {pattern!r} on the terminal; it shows:\n{self.seen[-3000:]}"
            if select.select([self.master], [], [], min(left, 1.0))[0]:
                try:
                    self.read()
                except OSError:  # the command ended and closed the terminal
                    time.sleep(0.2)

    def read(self) -> None:
        """What the terminal shows, its colours and cursor moves taken out."""
        self.seen += ANSI.sub("", os.read(self.master, 65536).decode(errors="replace"))

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def wait(self, timeout: float = 120) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            if select.select([self.master], [], [], 0.5)[0]:
                try:
                    self.read()
                except OSError:
                    break
        return self.proc.wait(timeout=max(1.0, deadline - time.monotonic()))


def eval_on_terminal(eegbench, run: str) -> Terminal:
    return Terminal([sys.executable, "-m", "runner.cli", "eval", "--model", "human", "--set", CASE, "--run", run],
                    eegbench.env())


def solution() -> str:
    [instance] = catalog.select(catalog.load_all(), [CASE])
    answer = {m.target_key: m.params["gt_value"] for m in instance.eval_config.metrics}
    return "<solution>\n" + json.dumps(answer, indent=1) + "\n</solution>\n"


def test_a_person_plays_an_instance_to_full_marks(eegbench):
    term = eval_on_terminal(eegbench, "human")
    term.expect("── instructions ──")
    term.expect(r"relative alpha")  # the instance's own message
    term.expect(PROMPT)
    term.type("<execute>\nx = 6 * 7\n\nprint(x)\n</execute>\n")  # an empty line inside the block
    term.expect(r"\b42\b")  # the observation
    term.expect(PROMPT)
    term.type("I think it is about 0.3\n\n")
    term.expect("no action in that reply")
    term.expect(r"turn 2\)")  # asked again: the refused reply cost no turn
    term.type(solution())
    assert term.wait() == 0, term.seen[-3000:]
    [result] = eegbench.results("human")
    assert (result["status"], result["score"]) == ("solution", 100.0), result
    turns = eegbench.transcript("human", CASE)["turns"]
    assert [t["reply"] for t in turns] == ["<execute>\nx = 6 * 7\n\nprint(x)\n</execute>", solution().strip("\n")]
    assert all(t["latency_s"] > 0 for t in turns)  # the person's time on task


def test_ctrl_c_at_the_prompt_stops_cleanly_and_the_run_resumes(eegbench):
    term = eval_on_terminal(eegbench, "human-stop")
    term.expect(PROMPT)
    term.type("\x03")  # Ctrl-C, through the terminal
    assert term.wait() == 130, term.seen[-3000:]
    assert "rerun with RUN=human-stop to resume" in term.seen
    assert eegbench.results("human-stop") == []  # nothing recorded for the instance under way
    assert not (eegbench.runs_dir / "human-stop" / "instances" / CASE / "score.json").exists()
    term = eval_on_terminal(eegbench, "human-stop")
    term.expect(PROMPT)
    term.type(solution())
    assert term.wait() == 0, term.seen[-3000:]
    assert [(r["case_id"], r["score"]) for r in eegbench.results("human-stop")] == [(CASE, 100.0)]
