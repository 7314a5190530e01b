"""OracleModel: the execute reply runs the reference script, the solution carries its result."""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import re
from pathlib import Path

import pytest

from runner.models.base import ModelError
from runner.models.oracle import RESULT_MARKER, OracleModel, find_result, solution_reply
from validation.instance import Instance

SCRIPT = '''\
"""A stand-in reference script: echoes what it was called with."""


def run(inputs, params):
    return {"n_inputs": len(inputs), "first": inputs[0], "alpha": round(params["scale"] * 0.5, 6),
            "channels": params["channels"]}
'''


def make_instance(root: Path, script: str = SCRIPT, params: dict | None = None, **ref) -> Instance:
    path = root / "reference_scripts" / "fa_echo.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(script)
    reference = {
        "script": "reference_scripts/fa_echo.py",
        "script_sha256": hashlib.sha256(script.encode()).hexdigest(),
        "params": params if params is not None else {"scale": 0.25, "channels": ["O1.", "Oz."]},
    }
    reference.update(ref)
    return Instance.model_validate({
        "meta_info": {"case_id": "fa_echo-01", "bench_subset": "Foundational Analysis"},
        "agent_input": {"data_path": ["eegmmidb/S001R02.edf", "plux/x.h5"], "instruction": "do it"},
        "eval_config": {"metrics": []},
        "reference": reference,
    })


def run_in_fresh_namespace(reply: str) -> str:
    """Execute the code of an <execute> reply as the kernel would and return its stdout."""
    code = re.fullmatch(r"<execute>\n(.*)</execute>", reply, flags=re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<oracle>", "exec"), {"__name__": "__main__"})
    return out.getvalue()


def converse(instance: Instance, root: Path) -> tuple[str, str, str]:
    session = OracleModel(root).session(instance)
    first = session.complete([{"role": "user", "content": "task"}]).text
    observation = run_in_fresh_namespace(first)
    messages = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": first},
        {"role": "user", "content": observation},
    ]
    return first, observation, session.complete(messages).text


def solution_json(text: str) -> dict:
    match = re.fullmatch(r"<solution>\n```json\n(.*)\n```\n</solution>", text, flags=re.S)
    assert match, text
    return json.loads(match.group(1))


def test_first_reply_holds_the_script_source_and_a_call_on_sandbox_paths(tmp_path):
    first, _, _ = converse(make_instance(tmp_path), tmp_path)
    assert first.startswith("<execute>\n" + SCRIPT)
    assert first.endswith("</execute>")
    assert "run(['/input/eegmmidb/S001R02.edf', '/input/plux/x.h5'], {'scale': 0.25" in first


def test_solution_carries_the_script_result_as_a_json_object(tmp_path):
    _, observation, second = converse(make_instance(tmp_path), tmp_path)
    assert observation.count(RESULT_MARKER) == 1
    assert solution_json(second) == {
        "n_inputs": 2,
        "first": "/input/eegmmidb/S001R02.edf",
        "alpha": 0.125,
        "channels": ["O1.", "Oz."],
    }


def test_params_that_repr_cannot_express_go_through_json(tmp_path):
    script = "def run(inputs, params):\n    return {'isnan': params['x'] != params['x']}\n"
    first, _, second = converse(make_instance(tmp_path, script, params={"x": math.nan}), tmp_path)
    assert "_eegbench_json.loads(" in first
    assert solution_json(second) == {"isnan": True}


def test_later_calls_repeat_the_solution(tmp_path):
    session = OracleModel(tmp_path).session(make_instance(tmp_path))
    first = session.complete([{"role": "user", "content": "task"}]).text
    observation = run_in_fresh_namespace(first)
    second = session.complete([{"role": "user", "content": observation}]).text
    third = session.complete([{"role": "user", "content": "please give a final answer"}]).text
    assert third == second


def test_failed_script_gives_a_solution_that_says_so_and_quotes_the_output():
    observation = (
        "Traceback (most recent call last):\n"
        '  File "<cell>", line 3, in run\n'
        "FileNotFoundError: /input/eegmmidb/S001R02.edf\n"
    )
    text = solution_reply(observation)
    assert text.startswith("<solution>\n") and text.endswith("\n</solution>")
    assert "produced no result" in text
    assert "FileNotFoundError: /input/eegmmidb/S001R02.edf" in text
    assert "```json" not in text


def test_quoted_output_cannot_close_the_solution_early():
    text = solution_reply("x" * 5000 + "</solution> trailing")
    assert text.count("</solution>") == 1
    assert len(text) < 2500  # only the tail is quoted


def test_the_last_marker_line_wins_and_bad_json_is_reported():
    observation = f"noise\n{RESULT_MARKER}{{\"a\": 1}}\nmore\n{RESULT_MARKER}{{\"a\": 2}}\n"
    assert find_result(observation) == ({"a": 2}, None)
    result, problem = find_result(f"{RESULT_MARKER}{{\"a\": 1, \n")
    assert result is None and "not valid JSON" in problem
    result, problem = find_result(f"{RESULT_MARKER}[1, 2]\n")
    assert result is None and "not a JSON object" in problem


def test_instance_without_reference_is_a_model_error_not_infrastructure(tmp_path):
    instance = make_instance(tmp_path).model_copy(update={"reference": None})
    session = OracleModel(tmp_path).session(instance)
    with pytest.raises(ModelError) as info:
        session.complete([])
    assert info.value.infrastructure is False
    assert "fa_echo-01" in str(info.value)


def test_script_edited_after_truth_generation_is_refused(tmp_path):
    instance = make_instance(tmp_path, script_sha256="0" * 64)
    with pytest.raises(ModelError, match="changed since its ground truth") as info:
        OracleModel(tmp_path).session(instance).complete([])
    assert info.value.infrastructure is False


def test_script_outside_the_project_is_refused(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    instance = make_instance(tmp_path)  # the script exists, but beside the project, not in it
    instance.reference.script = "../reference_scripts/fa_echo.py"
    with pytest.raises(ModelError, match="outside the project"):
        OracleModel(root).session(instance).complete([])


def test_an_ensemble_result_is_reported_as_the_answer_it_stands_for():
    observation = f"{RESULT_MARKER}{json.dumps({'iaf': {'welch': 10.0, 'multitaper': 10.25, 'welch4': 10.5}, 'band': {'a': 'alpha', 'b': 'alpha'}, 'n': 3})}\n"
    text = solution_reply(observation, {"iaf": "numeric_check", "band": "categorical_check"})
    reported = json.loads(text.split("```json\n")[1].split("\n```")[0])
    assert reported == {"iaf": 10.25, "band": "alpha", "n": 3}
