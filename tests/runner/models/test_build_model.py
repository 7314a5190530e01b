"""build_model: spec strings to model kinds, and clear errors for bad specs."""
from __future__ import annotations

import json

import pytest

from runner.core.paths import Environment, Paths
from runner.core.settings import ModelSettings
from runner.models.kinds import MODEL_KINDS, BadModelSpec, ModelSpec, build_model
from runner.models.null import NullModel
from runner.models.openai_client import OpenAIModel
from runner.models.oracle import OracleModel
from runner.models.replay import ReplayModel
from runner.models.scripted import ScriptedModel
from validation.errors import UserError


def env(tmp_path, **variables):
    return Environment(paths=Paths(project_root=tmp_path), variables=variables)


def test_simple_kinds(tmp_path):
    assert isinstance(build_model("oracle", env=env(tmp_path)), OracleModel)
    assert isinstance(build_model("null", env=env(tmp_path)), NullModel)
    script = tmp_path / "r.json"
    script.write_text(json.dumps({"replies": ["a"]}))
    assert isinstance(build_model(f"script:{script}", env=env(tmp_path)), ScriptedModel)
    (tmp_path / "run" / "instances").mkdir(parents=True)
    (tmp_path / "run" / "run.json").write_text(json.dumps({"config": {"run_id": "run", "model": "null"}}))
    assert isinstance(build_model(f"replay:{tmp_path / 'run'}", env=env(tmp_path)), ReplayModel)


def test_replay_of_a_folder_that_is_not_a_run_names_it(tmp_path):
    with pytest.raises(UserError, match="not a run directory"):
        build_model(f"replay:{tmp_path}", env=env(tmp_path))


def test_openai_kind_takes_endpoint_from_env_and_options(tmp_path):
    options = ModelSettings(
        temperature=0.5, max_tokens=77, stop=("</execute>",), timeout_s=9, max_retries=1
    )
    model = build_model("openai:org/model-7b:q4", settings=options,
                        env=env(tmp_path, EEGBENCH_BASE_URL="http://127.0.0.1:9/v1", EEGBENCH_API_KEY="sk-abc"))
    assert isinstance(model, OpenAIModel)
    described = model.describe()
    assert described["model"] == "org/model-7b:q4"  # only the first colon splits the spec
    assert (described["temperature"], described["max_tokens"]) == (0.5, 77)
    assert described["stop"] == ["</execute>"]
    assert (described["timeout_s"], described["max_retries"]) == (9, 1)
    keys = env(tmp_path, OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_API_KEY="sk-abc")
    assert build_model("openai:m", env=keys).describe()["max_tokens"] == 2048


def test_openai_kind_without_env_names_the_variables(tmp_path):
    with pytest.raises(UserError, match="EEGBENCH_BASE_URL or OPENAI_BASE_URL"):
        build_model("openai:gpt-4o", env=env(tmp_path))


@pytest.mark.parametrize("spec", ["gpt-4o", "oracle:x", "nul", "", "Oracle"])
def test_unknown_kind_names_the_spec_and_the_valid_kinds(tmp_path, spec):
    with pytest.raises(BadModelSpec) as info:
        build_model(spec, env=env(tmp_path))
    assert repr(spec) in str(info.value)
    assert "script:PATH" in str(info.value) and "local[:GGUF]" in str(info.value)


@pytest.mark.parametrize("spec", ["script:", "replay:", "openai:", "local:"])
def test_kind_missing_its_argument(tmp_path, spec):
    with pytest.raises(BadModelSpec, match="needs an argument|nothing after"):
        build_model(spec, env=env(tmp_path))


def test_settings_record_as_plain_json():
    assert json.loads(ModelSettings(stop=("a",)).model_dump_json())["stop"] == ["a"]


@pytest.mark.parametrize(("text", "kind", "argument"), [
    ("oracle", "oracle", None), ("local", "local", None), ("local:/m/x.gguf", "local", "/m/x.gguf"),
    ("openai:org/m:q4", "openai", "org/m:q4"), ("script:a.json", "script", "a.json"),
])
def test_spec_parse_splits_at_the_first_colon(text, kind, argument):
    spec = ModelSpec.parse(text)
    assert (spec.kind, spec.argument) == (kind, argument) and str(spec) == text


@pytest.mark.parametrize(("text", "kind", "argument"), [
    ("qwen-vl", "openai", "qwen-vl"), ("gpt-4o:latest", "openai", "gpt-4o:latest"),
    ("script:j.json", "script", "j.json"), ("local", "local", None),
])
def test_scoring_spec_reads_a_bare_name_as_openai(text, kind, argument):
    spec = ModelSpec.parse(text, role="scoring")
    assert (spec.kind, spec.argument) == (kind, argument)


@pytest.mark.parametrize("text", ["oracle", "null", "replay:runs/r"])
def test_scoring_endpoints_refuse_nothing_they_treat_as_a_name(text):
    # oracle, null and replay are not scoring kinds: read as an openai model name, as before
    assert ModelSpec.parse(text, role="scoring").kind == "openai"


@pytest.mark.parametrize("name", MODEL_KINDS.names())
def test_every_kind_names_builders_that_exist(name):
    kind = MODEL_KINDS.get(name)
    builders = [kind.build] + ([kind.endpoint] if kind.endpoint else [])
    assert all(callable(b.target()) for b in builders)  # type: ignore[attr-defined]


def test_scoring_kinds_are_those_with_an_endpoint_builder():
    scoring = {k.name for k in MODEL_KINDS.items() if k.endpoint is not None}
    assert scoring == {"script", "openai", "local"}
    for name in scoring:
        assert ModelSpec.parse(f"{name}:x", role="scoring").kind == name
