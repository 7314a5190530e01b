"""build_model: spec strings to model kinds, and clear errors for bad specs."""
from __future__ import annotations

import json

import pytest

from runner.models import ModelOptions, build_model
from runner.models.null import NullModel
from runner.models.openai_client import OpenAIModel
from runner.models.oracle import OracleModel
from runner.models.replay import ReplayModel
from runner.models.scripted import ScriptedModel


def test_simple_kinds(tmp_path):
    assert isinstance(build_model("oracle", project_root=tmp_path), OracleModel)
    assert isinstance(build_model("null", project_root=tmp_path), NullModel)
    script = tmp_path / "r.json"
    script.write_text(json.dumps({"replies": ["a"]}))
    assert isinstance(build_model(f"script:{script}", project_root=tmp_path), ScriptedModel)
    (tmp_path / "run" / "instances").mkdir(parents=True)
    assert isinstance(build_model(f"replay:{tmp_path / 'run'}", project_root=tmp_path), ReplayModel)


def test_openai_kind_takes_endpoint_from_env_and_options(tmp_path, monkeypatch):
    monkeypatch.setenv("EEGBENCH_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("EEGBENCH_API_KEY", "sk-abc")
    options = ModelOptions(
        temperature=0.5, max_tokens=77, stop=("</execute>",), timeout_s=9, max_retries=1
    )
    model = build_model("openai:org/model-7b:q4", project_root=tmp_path, options=options)
    assert isinstance(model, OpenAIModel)
    described = model.describe()
    assert described["model"] == "org/model-7b:q4"  # only the first colon splits the spec
    assert (described["temperature"], described["max_tokens"]) == (0.5, 77)
    assert described["stop"] == ["</execute>"]
    assert (described["timeout_s"], described["max_retries"]) == (9, 1)
    assert build_model("openai:m", project_root=tmp_path).describe()["max_tokens"] == 2048


def test_openai_kind_without_env_names_the_variables(tmp_path, monkeypatch):
    for name in ("EEGBENCH_BASE_URL", "EEGBENCH_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="EEGBENCH_BASE_URL or OPENAI_BASE_URL"):
        build_model("openai:gpt-4o", project_root=tmp_path)


@pytest.mark.parametrize("spec", ["gpt-4o", "oracle:x", "nul", "", "Oracle"])
def test_unknown_kind_names_the_spec_and_the_valid_kinds(tmp_path, spec):
    with pytest.raises(ValueError) as info:
        build_model(spec, project_root=tmp_path)
    assert repr(spec) in str(info.value)
    assert "script:PATH" in str(info.value) and "local[" not in str(info.value)


@pytest.mark.parametrize("spec", ["script:", "replay:", "openai:", "local:"])
def test_kind_missing_its_argument(tmp_path, spec):
    with pytest.raises(ValueError, match="needs an argument|nothing after"):
        build_model(spec, project_root=tmp_path)


def test_options_record_as_plain_json():
    assert json.loads(json.dumps(ModelOptions(stop=("a",)).as_dict()))["stop"] == ["a"]
