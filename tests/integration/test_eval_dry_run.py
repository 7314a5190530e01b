"""`eegbench eval --dry-run`: it prints the plan and the estimate and starts nothing, calls no
model and writes no run; and its estimate holds against a real scripted run over HTTP, whose
requests the stub endpoint records."""
from __future__ import annotations

import re

import pytest

from runner.benchmark import catalog
from runner.core.paths import Environment
from runner.core.settings import ControlLimits
from runner.models.base import prompt_tokens
from runner.paradigms import get_paradigm
from runner.run.estimate import estimate
from tests.endpoint_stub import ScriptedServer, completion_body

pytestmark = pytest.mark.integration

CASES = ["fa_alpha_relpower-01", "pi_eog_blink_count-01"]
REPLY_LIMIT = 300


def test_dry_run_prints_the_estimate_and_starts_nothing(eegbench, endpoint):
    with ScriptedServer([]) as server:
        done = eegbench("eval", "--dry-run", "--model", endpoint(server), "--set", ",".join(CASES),
                        "--prices", "2.5,10", "--run", "dry")
    assert done.returncode == 0, done.stderr[-2000:]
    assert server.requests == [] and not (eegbench.runs_dir / "dry").exists()
    out = done.stdout + done.stderr  # the console writes to stderr
    assert "2 instances" in out and CASES[0] in out and "all 2 input files present" in out
    assert re.search(r"lower bound\s+│\s+2\s+│", out) and "cost (USD)" in out and "nothing was started" in out


def test_dry_run_refuses_bad_prices_naming_the_option(eegbench):
    done = eegbench("eval", "--dry-run", "--model", "null", "--set", CASES[0], "--prices", "cheap")
    assert done.returncode == 2 and "--prices 'cheap'" in done.stderr
    done = eegbench("eval", "--model", "null", "--set", CASES[0], "--prices", "1,2")
    assert done.returncode == 2 and "--prices: goes with --dry-run" in done.stderr


def test_the_estimate_holds_against_a_scripted_run(eegbench, endpoint):
    replies = [(200, completion_body(text), {}, 0.0) for _ in CASES
               for text in ("<execute>print(sum(range(10)))</execute>", "<solution>{}</solution>")]
    with ScriptedServer(replies) as server:
        done = eegbench("eval", "--model", endpoint(server), "--set", ",".join(CASES), "--run", "est",
                        "--max-tokens", str(REPLY_LIMIT), "--parser", "rules")  # the model alone calls the endpoint
    assert done.returncode == 0, done.stderr[-2000:]
    sent = [prompt_tokens(r["body"]["messages"], r["body"].get("tools")) for r in server.requests]
    assert len(sent) == 4  # two turns an instance

    instances = catalog.select(catalog.load_all(), CASES)
    controls = ControlLimits()
    found = estimate(get_paradigm("codeact"), instances, controls, Environment.from_os().paths.data_root, REPLY_LIMIT)
    assert sorted(found.first_prompt_tokens.values()) == sorted(sent[0::2])  # each first call, to the token
    assert found.lower.calls <= len(sent) <= found.typical.calls
    assert found.lower.prompt_tokens <= sum(sent)
    _, growth = get_paradigm("codeact").typical_calls(controls, REPLY_LIMIT)
    assert all(0 < later - first <= 2 * growth for first, later in zip(sent[0::2], sent[1::2]))  # within the full budgets
