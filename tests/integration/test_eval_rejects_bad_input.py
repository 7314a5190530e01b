"""A user gives `eegbench eval` a malformed input (a case or instance file, a data root, a
model spec, a script file, an environment variable): the command exits 2 with one error line
naming the file (or option, or variable) and the field, shows no traceback, and leaves no
run directory behind."""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runner.core.paths import Environment

EDF = "eegmmidb/S001R02.edf"
DATA_ROOT = Environment.from_os().paths.data_root
RUN = "bad-input"


def brainbench_case() -> dict[str, Any]:
    """A valid case in BrainBench's own spelling (gt_value, weights summing to 100)."""
    return {
        "meta_info": {"case_id": "bb_bad_input", "bench_subset": "Foundational Analysis", "difficult": 1.0},
        "agent_input": {"data_path": EDF, "instruction": "How many channels does the recording have?"},
        "eval_config": {"parser_prompt": "Extract n_channels.", "metrics": [
            {"metric_id": "count", "type": "numeric_check", "target_key": "n_channels", "weight": 100,
             "params": {"gt_value": 64, "tolerance": 0}}]},
    }


def at(doc: dict[str, Any], dotted: str) -> tuple[Any, str | int]:
    """(the container, the key) a dotted path with [i] indices ends in."""
    parts: list[str | int] = [int(p) if p.isdigit() else p for p in dotted.replace("[", ".").replace("]", "").split(".")]
    for part in parts[:-1]:
        doc = doc[part]  # type: ignore[index]
    return doc, parts[-1]


def setting(dotted: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        container, key = at(doc, dotted)
        container[key] = value
    return mutate


def dropping(dotted: str) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        container, key = at(doc, dotted)
        del container[key]
    return mutate


def write_case(folder: Path, mutate: Callable[[dict[str, Any]], None] | None = None, name: str = "case1_01.json") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    case = brainbench_case()
    if mutate is not None:
        mutate(case)
    path = folder / name
    path.write_text(json.dumps(case, indent=1))
    return path


def write_script(tmp: Path, content: bytes | dict[str, Any] | list[Any], name: str = "replies.json") -> str:
    path = tmp / name
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return f"script:{path}"


GOOD_REPLIES = {"replies": ["<solution>\n64 channels\n</solution>"]}


def rejected(eegbench, *args: str) -> str:
    """Run eval; assert exit 2, no traceback, no run directory; return the error text."""
    proc = eegbench("eval", "--run", RUN, "--jobs", "1", "--parser", "rules", *args, timeout=300)
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, proc.stderr[-3000:]
    runs = eegbench.runs_dir
    assert not runs.is_dir() or not any(runs.iterdir()), f"left behind: {sorted(runs.iterdir())}"
    return errors[0]


CASE_FILE_PROBLEMS = {
    "missing_case_id": (dropping("meta_info.case_id"), "field 'meta_info.case_id': missing (required)"),
    "case_id_not_a_folder_name": (setting("meta_info.case_id", "../escape"), "field 'meta_info.case_id': expected a case id"),
    "mistyped_weight": (setting("eval_config.metrics[0].weight", "heavy"),
                        "field 'eval_config.metrics[0].weight': expected a number, got 'heavy'"),
    "mistyped_tolerance": (setting("eval_config.metrics[0].params.tolerance", "abc"),
                           "field 'eval_config.metrics[0].params.tolerance' (metric count, numeric_check): "
                           "must be a finite number, got 'abc'"),
    "mistyped_gt_value": (setting("eval_config.metrics[0].params.gt_value", {"n": 64}),
                          "field 'eval_config.metrics[0].params.gt_value'"),
    "missing_gt_value": (dropping("eval_config.metrics[0].params.gt_value"), "field 'eval_config.metrics[0].params'"),
    "unknown_metric_type": (setting("eval_config.metrics[0].type", "numeric_chek"),
                            "field 'eval_config.metrics[0].type': unknown metric type 'numeric_chek'"),
    "no_metrics": (setting("eval_config.metrics", []), "field 'eval_config.metrics': expected at least one metric"),
    "data_path_outside_data_root": (setting("agent_input.data_path", "/etc/passwd"),
                                    "field 'agent_input.data_path': expected a path relative to the data root"),
    "data_path_mistyped": (setting("agent_input.data_path", 7),
                           "field 'agent_input.data_path': expected a string or a list of strings, got 7"),
    "missing_instruction": (dropping("agent_input.instruction"), "field 'agent_input.instruction': missing (required)"),
    "difficulty_not_a_level": (setting("meta_info.difficulty", "extreme"), "field 'meta_info.difficulty': expected one of"),
}


@pytest.mark.parametrize("problem", sorted(CASE_FILE_PROBLEMS))
def test_malformed_case_file(eegbench, tmp_path, problem):
    mutate, expected = CASE_FILE_PROBLEMS[problem]
    path = write_case(tmp_path / "cases" / "case1", mutate)
    error = rejected(eegbench, "--cases", str(tmp_path / "cases"), "--data-root", str(DATA_ROOT),
                     "--model", write_script(tmp_path, GOOD_REPLIES))
    assert error.startswith(f"error: {path}: "), error
    assert expected in error, error


@pytest.mark.parametrize("text", [b'{"meta_info": {"case_id": "bb', b"", b"\xff\xfe{}", b"[1, 2]"],
                         ids=["truncated", "empty", "not_utf8", "not_an_object"])
def test_case_file_that_is_not_a_json_object(eegbench, tmp_path, text):
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "case1_01.json").write_bytes(text)
    error = rejected(eegbench, "--cases", str(folder), "--data-root", str(DATA_ROOT),
                     "--model", write_script(tmp_path, GOOD_REPLIES))
    assert error.startswith(f"error: {folder / 'case1_01.json'}: "), error
    assert any(w in error for w in ("not valid JSON (line 1", "empty file", "not UTF-8", "expected a JSON object")), error


def test_two_case_files_with_one_case_id(eegbench, tmp_path):
    first = write_case(tmp_path / "cases", name="case1_01.json")
    second = write_case(tmp_path / "cases", name="case1_02.json")
    error = rejected(eegbench, "--cases", str(tmp_path / "cases"), "--data-root", str(DATA_ROOT),
                     "--model", write_script(tmp_path, GOOD_REPLIES))
    assert f"{second}: field 'meta_info.case_id': 'bb_bad_input' is also the case id of {first}" in error


def test_malformed_local_instance_file_of_the_builtin_set(eegbench, tmp_path, monkeypatch, all_case_ids):
    """EEGBENCH_LOCAL_INSTANCES adds instance files to the benchmark: a broken one is named
    even when SET= does not select it."""
    local = tmp_path / "local" / "mine"
    path = write_case(local, setting("eval_config.metrics[0].params.tolerance", -1), name="mine-01.json")
    monkeypatch.setenv("EEGBENCH_LOCAL_INSTANCES", str(tmp_path / "local"))
    error = rejected(eegbench, "--set", all_case_ids[0], "--model", "null")
    assert error == (f"error: {path}: field 'eval_config.metrics[0].params.tolerance' (metric count, numeric_check): "
                     "must be >= 0, got -1")


def test_data_root_that_is_not_a_directory(eegbench, tmp_path):
    write_case(tmp_path / "cases")
    error = rejected(eegbench, "--cases", str(tmp_path / "cases"), "--data-root", str(tmp_path / "nowhere"),
                     "--model", write_script(tmp_path, GOOD_REPLIES))
    assert error.startswith(f"error: --data-root {tmp_path / 'nowhere'}: not a directory"), error


MODEL_SPECS = {
    "unknown_kind": (["--model", "gpt-4o"], "error: --model: unknown model spec 'gpt-4o'"),
    "argument_missing": (["--model", "script:"], "error: --model: model spec 'script:': script needs an argument"),
    "argument_not_taken": (["--model", "oracle:x"], "error: --model: model spec 'oracle:x': oracle takes nothing"),
    "judge_argument_missing": (["--judge", "script:"], "error: --judge: model spec 'script:'"),
}


@pytest.mark.parametrize("problem", sorted(MODEL_SPECS))
def test_malformed_model_spec(eegbench, tmp_path, problem):
    args, expected = MODEL_SPECS[problem]
    write_case(tmp_path / "cases")
    model = [] if "--model" in args else ["--model", write_script(tmp_path, GOOD_REPLIES)]
    error = rejected(eegbench, "--cases", str(tmp_path / "cases"), "--data-root", str(DATA_ROOT), *model, *args)
    assert error.startswith(expected), error


def test_local_model_whose_gguf_is_missing(eegbench, tmp_path):
    write_case(tmp_path / "cases")
    gguf = tmp_path / "absent.gguf"
    error = rejected(eegbench, "--cases", str(tmp_path / "cases"), "--data-root", str(DATA_ROOT), "--model", f"local:{gguf}")
    assert error == f"error: model spec 'local:{gguf}': no GGUF file at {gguf}"


SCRIPT_FILES = {
    "not_json": (b'{"replies": [', "not valid JSON"),
    "not_utf8": (b"\xff\xfe", "not UTF-8 text"),
    "no_replies": ({"reply": ["x"]}, 'missing field "replies"'),
    "reply_not_a_string": ({"replies": ["<solution>1</solution>", 3]}, 'field "replies[1]" must be a string, got int'),
    "epoch_key_not_a_number": ({"replies": [], "epochs": {"²": []}}, "field \"epochs\" has key '²'"),
}


@pytest.mark.parametrize("problem", sorted(SCRIPT_FILES))
def test_malformed_script_file(eegbench, tmp_path, problem):
    content, expected = SCRIPT_FILES[problem]
    write_case(tmp_path / "cases")
    model = write_script(tmp_path, content)
    error = rejected(eegbench, "--cases", str(tmp_path / "cases"), "--data-root", str(DATA_ROOT), "--model", model)
    assert error.startswith(f"error: {model.removeprefix('script:')}: "), error
    assert expected in error, error


def test_replay_of_a_broken_run_directory(eegbench, tmp_path):
    run = tmp_path / "old-run"
    run.mkdir()
    (run / "run.json").write_text('{"format_version": ')
    write_case(tmp_path / "cases")
    error = rejected(eegbench, "--cases", str(tmp_path / "cases"), "--data-root", str(DATA_ROOT), "--model", f"replay:{run}")
    assert error.startswith(f"error: replay: {run / 'run.json'}: field '(top level)': not valid JSON"), error


ENVIRONMENT = {
    "MODEL": ("script", "error: MODEL: model spec 'script': script needs an argument"),
    "EEGBENCH_JUDGE_MODEL": ("local:", "error: EEGBENCH_JUDGE_MODEL: model spec 'local:'"),
    "EEGBENCH_BASE_URL": ("api.example.com/v1", "error: EEGBENCH_BASE_URL='api.example.com/v1': expected an http:// or https:// URL"),
}


@pytest.mark.parametrize("variable", sorted(ENVIRONMENT))
def test_malformed_environment_variable(eegbench, tmp_path, monkeypatch, variable):
    value, expected = ENVIRONMENT[variable]
    monkeypatch.setenv(variable, value)
    monkeypatch.setenv("EEGBENCH_API_KEY", "sk-test")
    write_case(tmp_path / "cases")
    model = ["--model", "openai:some-model"] if variable == "EEGBENCH_BASE_URL" else \
        [] if variable == "MODEL" else ["--model", write_script(tmp_path, GOOD_REPLIES)]
    error = rejected(eegbench, "--cases", str(tmp_path / "cases"), "--data-root", str(DATA_ROOT), *model)
    assert error.startswith(expected), error


def test_runs_directory_that_is_a_file(eegbench, tmp_path):
    """EEGBENCH_RUNS names a file: refused before anything is written."""
    blocker = tmp_path / "runs-file"
    blocker.write_text("not a folder")
    eegbench.runs_dir = blocker
    write_case(tmp_path / "cases")
    error = rejected(eegbench, "--cases", str(tmp_path / "cases"), "--data-root", str(DATA_ROOT),
                     "--model", write_script(tmp_path, GOOD_REPLIES))
    assert error == f"error: EEGBENCH_RUNS={blocker}: {blocker} is not a directory"
    assert blocker.read_text() == "not a folder"


def test_the_valid_case_runs(eegbench, tmp_path):
    """The unmutated case and script run: every rejection above is the mutation's doing."""
    write_case(tmp_path / "cases")
    proc = eegbench("eval", "--run", RUN, "--jobs", "1", "--parser", "rules", "--cases", str(tmp_path / "cases"),
                    "--data-root", str(DATA_ROOT), "--model", write_script(tmp_path, GOOD_REPLIES), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [r["case_id"] for r in eegbench.results(RUN)] == ["bb_bad_input"]


def test_case_whose_input_is_missing_under_the_data_root(eegbench, tmp_path):
    write_case(tmp_path / "cases", setting("agent_input.data_path", "eegmmidb/absent.edf"))
    error = rejected(eegbench, "--cases", str(tmp_path / "cases"), "--data-root", str(DATA_ROOT),
                     "--model", write_script(tmp_path, GOOD_REPLIES))
    assert error == (f"error: input files missing under {DATA_ROOT}: bb_bad_input: agent_input names "
                     "eegmmidb/absent.edf (check --data-root)")


def test_judge_endpoint_with_a_malformed_base_url(eegbench, tmp_path, monkeypatch):
    monkeypatch.setenv("EEGBENCH_JUDGE_BASE_URL", "judge.example.com")
    monkeypatch.setenv("EEGBENCH_JUDGE_API_KEY", "sk-test")
    write_case(tmp_path / "cases")
    error = rejected(eegbench, "--cases", str(tmp_path / "cases"), "--data-root", str(DATA_ROOT),
                     "--model", write_script(tmp_path, GOOD_REPLIES), "--judge", "openai:judge-model")
    assert error.startswith("error: EEGBENCH_JUDGE_BASE_URL='judge.example.com': expected an http:// or https:// URL"), error


NO_USERNS = ("bwrap: No permissions to creating new namespace, likely because the kernel does not allow "
             "non-privileged user namespaces")


@pytest.mark.parametrize("bwrap, expected", [
    (None, "missing executables: bwrap"),
    (NO_USERNS, "unprivileged user namespaces are disabled here" if os.geteuid() else "bubblewrap cannot create"),
])
def test_a_machine_whose_bubblewrap_cannot_sandbox(eegbench, tmp_path, monkeypatch, bwrap, expected):
    """No bubblewrap on PATH, or one the kernel refuses namespaces: one line with the fix, exit 2."""
    fake = tmp_path / "bin"
    fake.mkdir()
    if bwrap is not None:
        (fake / "bwrap").write_text(f"#!/bin/sh\necho '{bwrap}' >&2\nexit 1\n")
        (fake / "bwrap").chmod(0o755)
        (fake / "setpriv").symlink_to("/usr/bin/setpriv")
    monkeypatch.setenv("PATH", str(fake))
    write_case(tmp_path / "cases")
    error = rejected(eegbench, "--sandbox", "local", "--cases", str(tmp_path / "cases"), "--data-root", str(DATA_ROOT),
                     "--model", write_script(tmp_path, GOOD_REPLIES))
    assert error.startswith(f"error: sandbox backend local cannot run here: {expected}"), error
