"""NullModel, ScriptedModel and ReplayModel: per-session counting and file errors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.core.transcript import Turn
from runner.models.base import ModelError
from runner.models.null import NullModel
from runner.models.replay import ReplayModel
from runner.models.scripted import ScriptedModel
from runner.run.records import EpochInstance
from validation.errors import UserError
from validation.instance import Instance


def instance(case_id: str) -> Instance:
    return Instance.model_validate({
        "meta_info": {"case_id": case_id, "bench_subset": "Sleep Assessment"},
        "agent_input": {"data_path": "yasa/sample_data_sri.csv", "instruction": "x"},
        "eval_config": {"metrics": []},
    })


def replies(session, n: int) -> list[str]:
    return [session.complete([{"role": "user", "content": "go"}]).text for _ in range(n)]


def test_null_answers_an_empty_solution_every_time():
    session = NullModel().session(instance("sa_x-01"))
    assert replies(session, 2) == ["<solution></solution>"] * 2


def test_scripted_replies_count_per_session_then_empty(tmp_path):
    path = tmp_path / "replies.json"
    script = ["<execute>print(1)</execute>", "<solution>2</solution>"]
    path.write_text(json.dumps({"replies": script}))
    model = ScriptedModel(path)
    first = model.session(instance("a-01"))
    assert replies(first, 3) == ["<execute>print(1)</execute>", "<solution>2</solution>", ""]
    second = model.session(instance("a-02"))  # a new instance starts from the top
    assert replies(second, 1) == ["<execute>print(1)</execute>"]
    assert model.describe()["replies"] == 2


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"reply": ["x"]}', 'missing field "replies"'),
        ('["x"]', 'missing field "replies"'),
        ('{"replies": "x"}', 'field "replies" must be a list'),
        ('{"replies": ["ok", 3]}', 'field "replies\\[1\\]" must be a string, got int'),
        ("{not json", "not valid JSON"),
    ],
)
def test_scripted_file_errors_name_the_file_and_the_field(tmp_path, content, expected):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=expected) as info:
        ScriptedModel(path)
    assert str(path) in str(info.value)


def test_scripted_replies_per_epoch(tmp_path):
    path = tmp_path / "replies.json"
    path.write_text(json.dumps({"replies": ["<solution>a</solution>"], "epochs": {"2": ["<solution>b</solution>"]}}))
    model = ScriptedModel(path)
    epochs = {e: replies(model.session(EpochInstance.of(instance("a-01"), e)), 1)[0] for e in (1, 2, 3)}
    assert epochs == {1: "<solution>a</solution>", 2: "<solution>b</solution>", 3: "<solution>a</solution>"}
    assert replies(model.session(instance("a-01")), 1) == ["<solution>a</solution>"]  # a plain instance: epoch 1
    assert model.describe()["epochs"] == {"2": 1}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"replies": [], "epochs": ["x"]}', 'field "epochs" must be an object'),
        ('{"replies": [], "epochs": {"two": ["x"]}}', "field \"epochs\" has key 'two'"),
        ('{"replies": [], "epochs": {"0": ["x"]}}', "field \"epochs\" has key '0'"),
        ('{"replies": [], "epochs": {"2": "x"}}', 'field "epochs.2" must be a list'),
        ('{"replies": [], "epochs": {"2": ["x", 1]}}', 'field "epochs.2\\[1\\]" must be a string, got int'),
    ],
)
def test_scripted_epochs_errors_name_the_file_and_the_field(tmp_path, content, expected):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=expected) as info:
        ScriptedModel(path)
    assert str(path) in str(info.value)


def test_scripted_missing_file_is_named(tmp_path):
    with pytest.raises(ValueError, match="nope.json"):
        ScriptedModel(tmp_path / "nope.json")


def write_transcript(run_dir: Path, case_id: str, texts: list[str]) -> None:
    turns = [
        Turn(index=i, reply=text, action="none").model_dump(mode="json")
        for i, text in enumerate(texts)
    ]
    folder = run_dir / "instances" / case_id
    folder.mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps({"config": {"run_id": "r", "model": "null"}}))
    (folder / "transcript.json").write_text(json.dumps({"case_id": case_id, "status": "solution", "turns": turns}))


def test_replay_gives_the_recorded_replies_of_each_case_then_empty(tmp_path):
    write_transcript(tmp_path, "a-01", ["<execute>1</execute>", "<solution>a</solution>"])
    write_transcript(tmp_path, "a-02", ["<solution>b</solution>"])
    model = ReplayModel(tmp_path)
    first = replies(model.session(instance("a-01")), 3)
    assert first == ["<execute>1</execute>", "<solution>a</solution>", ""]
    assert replies(model.session(instance("a-02")), 2) == ["<solution>b</solution>", ""]


def test_replay_of_a_case_missing_from_the_run_names_case_and_run(tmp_path):
    write_transcript(tmp_path, "a-01", ["x"])
    session = ReplayModel(tmp_path).session(instance("zz-09"))
    with pytest.raises(ModelError) as info:
        session.complete([])
    assert info.value.infrastructure is False
    assert "zz-09" in str(info.value) and str(tmp_path) in str(info.value)


def test_replay_of_a_malformed_transcript_is_a_model_error(tmp_path):
    write_transcript(tmp_path, "a-01", ["x"])
    path = tmp_path / "instances" / "a-01" / "transcript.json"
    path.write_text(json.dumps({"case_id": "a-01", "status": "solution", "turns": [{"index": 0}]}))
    with pytest.raises(ModelError, match=r"turns\.0\.reply") as info:
        ReplayModel(tmp_path).session(instance("a-01")).complete([])
    assert info.value.infrastructure is False


def test_replay_needs_a_run_directory(tmp_path):
    with pytest.raises(UserError, match="not a run directory"):
        ReplayModel(tmp_path / "missing")


def test_replay_refuses_a_run_in_a_newer_format(tmp_path):
    write_transcript(tmp_path, "a-01", ["x"])
    (tmp_path / "run.json").write_text(json.dumps({"format_version": 99, "config": {"run_id": "r", "model": "null"}}))
    with pytest.raises(UserError, match="format version 99"):
        ReplayModel(tmp_path)
