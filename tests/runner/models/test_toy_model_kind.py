"""Adding a model kind is one registration: a toy kind, defined and registered in this module
only, is offered by MODEL=, built for `eegbench eval`, and (having an endpoint builder) parses
the reports: as the evaluated model it is also the parser when none is named, as an openai
model is. Its model states the ground truth in prose with «key=value» marks; its parser
endpoint turns the marks into the JSON fields the scorer reads."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from runner import cli
from runner.core.paths import Environment, Paths
from runner.core.settings import ModelSettings
from runner.core.transcript import Usage
from runner.models.base import Completion, Message, Model, ModelSession
from runner.models.endpoint import Endpoint
from runner.models.kinds import MODEL_KINDS, BadModelSpec, ModelKind, ModelSpec, build_model, register
from runner.scoring.endpoints import resolve
from validation.instance import Instance

CASE = "fa_alpha_relpower-01"
MARK = re.compile(r"«(\w+)=(.*?)»")


class ProseModel(Model):
    """Reports each metric's ground truth in a sentence, never as JSON."""

    def __init__(self, voice: str) -> None:
        self.name = f"toy:{voice}"

    def session(self, instance: Instance) -> ModelSession:
        marks = " ".join(f"«{m.target_key}={json.dumps(m.params['gt_value'])}»" for m in instance.eval_config.metrics)
        return _Said(f"<solution>I measured it, {marks}.</solution>")


class _Said(ModelSession):
    def __init__(self, text: str) -> None:
        self.text = text

    def complete(self, messages: list[Message]) -> Completion:
        return Completion(text=self.text, usage=Usage(), latency_s=0.0)


def build(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    return ProseModel(argument or "plain")


def endpoint(role: str, argument: str | None, env: Environment, cache_dir: Path | None) -> Endpoint:
    def send(messages: list[dict[str, Any]]) -> str:
        text = " ".join(str(m["content"]) for m in messages if m["role"] == "user")
        return json.dumps({key: json.loads(value) for key, value in MARK.findall(text)})

    return Endpoint(role, f"toy:{argument or 'plain'}", send, cache_dir=cache_dir)


@pytest.fixture
def toy():
    register(ModelKind("toy", "optional", "toy[:VOICE]", build, endpoint, default_parser=True))
    yield
    MODEL_KINDS.unregister("toy")
    assert "toy" not in MODEL_KINDS


def test_a_registered_kind_parses_builds_and_scores(toy, tmp_path):
    env = Environment(paths=Paths(project_root=tmp_path), variables={})
    assert isinstance(build_model("toy:calm", env=env), ProseModel)
    assert ModelSpec.parse("toy", role="scoring") == ModelSpec("toy")
    parser = resolve("parser", None, evaluated="toy:calm", env=env, cache_dir=tmp_path / "cache")
    assert parser is not None and parser.model == "toy:calm"
    assert json.loads(parser.chat([{"role": "user", "content": "«n=3» «f=[1, 2]»"}])) == {"n": 3, "f": [1, 2]}
    with pytest.raises(BadModelSpec, match=r"toy\[:VOICE\]"):
        ModelSpec.parse("toy:")


def test_without_its_registration_the_kind_is_unknown():
    assert "toy" not in MODEL_KINDS
    with pytest.raises(BadModelSpec, match="unknown model spec 'toy'"):
        ModelSpec.parse("toy")


@pytest.mark.integration
def test_a_registered_kind_runs_eval_and_parses_its_own_reports(toy, tmp_path, monkeypatch):
    monkeypatch.setenv("EEGBENCH_RUNS", str(tmp_path))
    assert cli.main(["eval", "--model", "toy:calm", "--parser", "llm", "--set", CASE, "--run", "t"]) == 0
    [result] = [json.loads(line) for line in (tmp_path / "t" / "results.jsonl").read_text().splitlines()]
    assert (result["status"], result["score"]) == ("solution", 100.0)
    run = json.loads((tmp_path / "t" / "run.json").read_text())
    assert run["model"]["name"] == "toy:calm"
    score = json.loads((tmp_path / "t" / "instances" / CASE / "score.json").read_text())
    assert score["parse_method"] == "llm"
