"""Adding a paradigm is one registration: a toy paradigm, defined and registered in this
module only, runs through `eegbench eval --paradigm toy` in a real sandbox: the scheduler
starts the sandbox it asks for, streams its turn, scores its report and records it."""
import json

import pytest

from runner import cli
from runner.core.transcript import Turn
from runner.paradigms import PARADIGMS
from runner.paradigms.base import Episode, Paradigm
from runner.paradigms.loop import InstanceOutcome

pytestmark = pytest.mark.integration
CASE = "fa_alpha_relpower-01"


class ListInputs(Paradigm):
    """One cell listing /input, then a report holding the ground truth it was not given."""

    name = "toy"

    def run(self, episode: Episode) -> InstanceOutcome:
        assert episode.sandbox is not None
        observation = episode.sandbox.execute("import os; print(sorted(os.listdir('/input')))")
        turn = Turn(index=0, reply="(toy)", action="execute", code="listdir", observation=observation)
        episode.on_turn(turn)
        metric = episode.instance.eval_config.metrics[0]
        report = json.dumps({metric.target_key: metric.params["gt_value"]})
        return InstanceOutcome("solution", report, [turn], [])


@pytest.fixture
def toy():
    PARADIGMS.register("toy", ListInputs)
    yield
    PARADIGMS.unregister("toy")


def test_a_registered_paradigm_runs_in_a_real_sandbox(toy, tmp_path, monkeypatch):
    monkeypatch.setenv("EEGBENCH_RUNS", str(tmp_path))
    assert cli.main(["eval", "--model", "null", "--paradigm", "toy", "--set", CASE, "--run", "t"]) == 0
    [result] = [json.loads(line) for line in (tmp_path / "t" / "results.jsonl").read_text().splitlines()]
    assert (result["status"], result["score"]) == ("solution", 100.0)
    transcript = json.loads((tmp_path / "t" / "instances" / CASE / "transcript.json").read_text())
    assert transcript["paradigm"] == "toy"
    assert transcript["turns"][0]["observation"]["text"].strip() == "['eegmmidb']"
    assert json.loads((tmp_path / "t" / "run.json").read_text())["paradigm"] == {"name": "toy"}
