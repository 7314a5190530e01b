"""`eegbench eval --paradigm brainagent` end to end: real CLI, real recordings, the toolset in a
real sandboxed kernel, the supervisor and subagents driven by the oracle, a script, null and
a real llama.cpp endpoint."""
from __future__ import annotations

import json

import pytest

from runner.benchmark import catalog
from runner.paradigms.brainagent.plans import plan_path
from tests.integration.conftest import PROJECT_ROOT
from validation.instance import load_instance

pytestmark = pytest.mark.integration

EDF = "/input/pylossless/sub-s01_task-faceO_eeg.edf"
CASE = "nc_p1_peak-01"  # 128-channel, 19-minute EDF: big enough to exhaust a small memory limit


def write_script(tmp_path, replies) -> str:
    path = tmp_path / "replies.json"
    path.write_text(json.dumps({"replies": [r if isinstance(r, str) else json.dumps(r) for r in replies]}))
    return f"script:{path}"


def one_case_per_task() -> list[str]:
    return [i.case_id for i in catalog.select(catalog.load_all(), [catalog.CHECK])]


def test_oracle_plays_every_tasks_tool_plan_to_full_marks(eegbench):
    cases = one_case_per_task()
    assert len(cases) >= 80
    done = eegbench("eval", "--paradigm", "brainagent", "--model", "oracle", "--set", ",".join(cases),
                    "--run", "ba-oracle", "--jobs", "2", timeout=2400)
    assert done.returncode == 0, done.stderr[-3000:]
    results = {r["case_id"]: r for r in eegbench.results("ba-oracle")}
    below = {c: (r["status"], r["score"], r["error"]) for c, r in results.items() if r["score"] != 100.0}
    assert set(results) == set(cases) and not below
    transcript = eegbench.transcript("ba-oracle", cases[0])
    roles = [t["role"] for t in transcript["turns"]]
    assert roles[0] == roles[-1] == "supervisor" and len(set(roles)) == 2
    calls = [c for t in transcript["turns"] for c in t["tool_calls"]]
    assert calls and all(c["status"] == "ok" and c["registered"] for c in calls)
    assert all(t["state_summary"].startswith("shared_state:") for t in transcript["turns"] if t["role"] != "supervisor")


def test_scripted_model_drives_a_multi_round_plan_with_a_failure_a_restart_and_a_repeat(eegbench, tmp_path):
    model = write_script(tmp_path, [
        {"objectives": [{"agent": "NeurocogAgent", "goal": "Inspect the recording and report the P1 amplitude."}]},
        {"calls": [{"tool": "load_recording", "arguments": {"path": EDF.removeprefix("/input/")}},
                   {"tool": "pick_channels", "arguments": {"recording": "rec7"}}]},          # unknown id
        {"calls": [{"tool": "pick_channels", "arguments": {"recording": "rec1"}}]},          # every channel: OOM
        {"calls": [{"tool": "recording_info", "arguments": {"recording": "rec1"}}]},         # state lost
        {"calls": [{"tool": "load_recording", "arguments": {"path": EDF}}]},
        {"calls": [{"tool": "load_recording", "arguments": {"path": EDF}}]},                 # the same call again
        {"report": {"p1_amplitude_uv": 3.0}, "notes": "guessed"},
        {"final_report": {"p1_amplitude_uv": 3.0}},
    ])
    done = eegbench("eval", "--paradigm", "brainagent", "--model", model, "--set", CASE, "--run", "ba-script",
                    "--memory-mb", "450", "--repeat-limit", "3")
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = eegbench.results("ba-script")
    assert result["status"] == "solution" and result["score"] is not None
    transcript = eegbench.transcript("ba-script", CASE)
    turns = transcript["turns"]
    assert [t["role"] for t in turns] == ["supervisor"] + ["NeurocogAgent"] * 6 + ["supervisor"]
    assert [t["action"] for t in turns] == ["decomposition"] + ["tool_call"] * 5 + ["report", "solution"]
    calls = [c for t in turns for c in t["tool_calls"]]
    assert [(c["name"], c["status"], c["error_code"]) for c in calls] == [
        ("load_recording", "ok", None), ("pick_channels", "error", "unknown_id"),
        ("pick_channels", "error", "out_of_memory"), ("recording_info", "error", "unknown_id"),
        ("load_recording", "ok", None), ("load_recording", "ok", None)]
    assert calls[0]["registered"] == ["rec1"] and calls[4]["registered"] == ["rec1"]  # ids restart with the kernel
    assert calls[5]["registered"] == ["rec2"] and "now run 2 times" in calls[5]["result"]
    assert "shared_state is empty" in calls[2]["result"]
    assert any(e["kind"] == "kernel_restart" for e in transcript["events"])
    assert "rec1" in turns[2]["state_summary"] and "rec1" not in turns[4]["state_summary"].split("[planning]")[0]
    shown = eegbench("show", "ba-script", CASE)
    assert shown.returncode == 0 and "tokens by role" in shown.stdout and "-> rec2" in shown.stdout


def test_repeating_one_call_ends_the_instance_as_repeated_failure(eegbench, tmp_path):
    call = {"calls": [{"tool": "load_recording", "arguments": {"path": EDF}}]}
    model = write_script(tmp_path, [{"objectives": [{"agent": "NeurocogAgent", "goal": "look"}]}, call, call, call])
    done = eegbench("eval", "--paradigm", "brainagent", "--model", model, "--set", CASE, "--run", "ba-repeat")
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = eegbench.results("ba-repeat")
    assert result["status"] == "repeated_failure" and result["score"] == 0.0


def test_hostile_tool_arguments_give_tool_errors_never_an_escape(eegbench, tmp_path):
    hostile = [
        ("load_recording", {"path": "/etc/shadow"}),
        ("load_recording", {"path": "/input/../../etc/passwd"}),
        ("inspect_file", {"path": "/proc/self/environ"}),
        ("read_table", {"path": "../../../../work/main/instances/neurocognitive_assessment/nc_p1_peak-01.json"}),
        ("load_recording", {"path": EDF}),
        ("pick_channels", {"recording": "rec1", "start_s": 0, "end_s": 1e12}),
        ("pick_channels", {"recording": "rec1", "channels": ["Oz'; import os; os.system('id')"]}),
        ("pick_channels", {"recording": "rec1", "channels": ["A1"], "end_s": 2.0}),
        ("write_fif", {"source": "sig1", "path": "/tmp/../etc/evil_raw.fif"}),
        ("write_fif", {"source": "sig1", "path": "../../outside_raw.fif"}),
        ("__import__", {"name": "os"}),
        ("load_recording", "\"); import os; os.system('touch /workspace/pwned') #"),
    ]
    replies = [{"objectives": [{"agent": "NeurocogAgent", "goal": "probe"}]},
               {"calls": [{"tool": t, "arguments": a} for t, a in hostile]},
               {"report": "done"}, {"final_report": "nothing"}]
    done = eegbench("eval", "--paradigm", "brainagent", "--model", write_script(tmp_path, replies), "--set", CASE,
                    "--run", "ba-hostile")
    assert done.returncode == 0, done.stderr[-3000:]
    transcript = eegbench.transcript("ba-hostile", CASE)
    calls = [c for t in transcript["turns"] for c in t["tool_calls"]]
    codes = [c["error_code"] for c in calls]
    assert codes == ["forbidden_path", "forbidden_path", "forbidden_path", "forbidden_path", None, "out_of_range",
                     "unknown_channel", None, "forbidden_path", "forbidden_path", "unsupported", "bad_argument"]
    text = json.dumps(calls)
    assert "root:" not in text and "ground_truth" not in text and "gt_value" not in text
    artifacts = eegbench.runs_dir / "ba-hostile" / "instances" / CASE / "artifacts"
    assert not list(artifacts.rglob("pwned")) if artifacts.exists() else True


def test_null_model_scores_zero(eegbench):
    done = eegbench("eval", "--paradigm", "brainagent", "--model", "null", "--set", CASE, "--run", "ba-null")
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = eegbench.results("ba-null")
    assert result["score"] == 0.0 and result["status"] in {"missing_action", "solution"}


def test_brainagent_against_a_real_llama_cpp_endpoint(eegbench):
    """SmolLM2 rarely follows the protocol; the run must complete with an honest status and
    real token usage recorded per role."""
    done = eegbench("eval", "--paradigm", "brainagent", "--model", "local", "--set", "fa_alpha_relpower-01",
                    "--run", "ba-local", "--max-rounds", "2", "--max-planning-rounds", "2", "--max-tokens", "48")
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = eegbench.results("ba-local")
    assert result["status"] in {"solution", "forced_solution", "max_rounds", "missing_action", "repeated_failure"}
    assert result["prompt_tokens"] > 0 and result["completion_tokens"] > 0
    transcript = eegbench.transcript("ba-local", "fa_alpha_relpower-01")
    assert transcript["turns"][0]["role"] == "supervisor"
    assert "FoundationalAgent" in transcript["messages"][0]["content"]


def test_plans_cover_every_task_and_check_in_process(eegbench):
    done = eegbench("plans", "check", "--task", "fa_hjorth")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "10/10 instances reproduce the ground truth" in done.stderr
    tasks = {load_instance(p).task_id for p in catalog.instance_files() if "eegagentbench" not in str(p)}
    assert len(tasks) >= 80 and all(plan_path(PROJECT_ROOT, task).is_file() for task in tasks)
