"""Tool plans: templates, references, segments, and every committed plan against the toolset."""
from __future__ import annotations

import pytest

import braintools
from eegtools.errors import ToolError as SchemaError
from eegtools.toolspec import validate
from runner.benchmark import catalog
from runner.core.paths import PROJECT_ROOT
from runner.paradigms.brainagent.agents import SUBAGENTS
from runner.paradigms.brainagent.plans import (
    Bindings,
    Plan,
    PlanError,
    build_report,
    finished,
    load_plan,
    next_segment,
    references,
)
from validation.instance import Instance


def instance(params: dict) -> Instance:
    return Instance.model_validate({
        "meta_info": {"case_id": "t-01", "bench_subset": "Foundational Analysis", "task_id": "t"},
        "agent_input": {"data_path": ["a/x.edf", "a/y.tsv"], "instruction": "do it"},
        "eval_config": {"parser_prompt": "", "metrics": []},
        "reference": {"script": "s.py", "script_sha256": "", "params": params},
    })


def plan(steps: list[dict], report: dict) -> Plan:
    return Plan.model_validate({"task_id": "t", "steps": steps, "report": report})


def test_templates_keep_types_and_format_inside_text():
    b = Bindings(instance({"channel": "O1", "start_s": 2.5, "window": {"len": 4}}))
    assert b.resolve("{start_s}") == 2.5
    assert b.resolve(["{channel}", "EEG {channel}"]) == ["O1", "EEG O1"]
    assert b.resolve("{window.len}") == 4
    assert b.resolve({"path": "{input1}", "all": "{inputs}"}) == {"path": "/input/a/y.tsv", "all": ["/input/a/x.edf", "/input/a/y.tsv"]}


def test_unknown_parameter_names_the_case_and_the_name():
    with pytest.raises(PlanError, match="t-01.*'missing'"):
        Bindings(instance({})).resolve("{missing}")


def test_a_segment_holds_every_step_whose_references_have_run():
    p = plan([{"as": "r", "tool": "load_recording", "args": {"path": "{input}"}},
              {"as": "s", "tool": "pick_channels", "args": {"recording": "$r"}},
              {"as": "t", "tool": "inspect_file", "args": {"path": "{input1}"}},
              {"as": "u", "tool": "time_features", "args": {"source": "$s"}}], {})
    b = Bindings(instance({}))
    assert [s.alias for s in next_segment(p, b)] == ["r", "t"]  # t does not wait for s
    b.responses["r"] = {"tool": "load_recording", "recording": {"id": "rec4"}}
    b.responses["t"] = {"tool": "inspect_file"}
    assert [s.alias for s in next_segment(p, b)] == ["s"]
    assert b.resolve("$r") == "rec4" and b.resolve("$r.recording") == "rec4"


def test_a_failed_condition_skips_the_step_and_what_needs_it():
    p = plan([{"as": "c", "tool": "check_request", "args": {"recording": "rec1"}},
              {"as": "x", "tool": "pick_channels", "args": {"recording": "rec1"},
               "when": {"from": "c", "path": ["check", "value", "feasible"], "equals": True}},
              {"as": "f", "tool": "time_features", "args": {"source": "$x", "features": ["rms"]}},
              {"as": "i", "tool": "recording_info", "args": {"recording": "rec1"}}],
             {"rms": {"from": "f", "path": ["features"], "default": None},
              "ok": {"from": "c", "path": ["check", "value", "feasible"]}})
    b = Bindings(instance({}))
    assert [s.alias for s in next_segment(p, b)] == ["c", "i"]
    b.responses["c"] = {"check": {"id": "res1", "value": {"feasible": False}}}
    b.responses["i"] = {"info": {}}
    assert next_segment(p, b) == [] and b.skipped == {"x", "f"}
    assert finished(p, b) and build_report(p, b) == {"rms": None, "ok": False}
    del p.report["rms"]["default"]
    with pytest.raises(PlanError, match="skipped"):
        build_report(p, b)


def test_report_reads_values_rounds_maps_and_fills_templates():
    b = Bindings(instance({"channel": "O1.."}))
    b.responses["h"] = {"features": {"id": "res1", "value": {"O1..": {"m": 1.23456, "ok": True}}}}
    p = plan([], {
        "m": {"from": "h", "path": ["features", "value", "{channel}", "m"], "round": 2},
        "verdict": {"map": {"from": "h", "path": ["features", "value", "{channel}", "ok"]},
                    "cases": {"true": "present", "false": "absent"}},
        "text": {"template": "{channel} mobility {m}", "values": {"m": {"from": "h", "path": ["features", "value", "O1..", "m"], "round": 1}}},
        "echo": {"param": "channel"},
    })
    assert build_report(p, b) == {"m": 1.23, "verdict": "present", "text": "O1.. mobility 1.2", "echo": "O1.."}


def test_a_failed_step_cannot_be_read():
    b = Bindings(instance({}))
    b.responses["r"] = {"error": {"code": "unknown_id", "message": "no"}}
    with pytest.raises(PlanError, match="failed"):
        b.resolve({"from": "r", "path": ["x"]})


def test_references_are_found_at_any_depth():
    assert references({"a": ["$x", {"from": "y", "path": ["$z"]}], "b": "$not-an-alias text"}) == {"x", "y", "z"}


def test_every_task_has_a_plan_whose_calls_match_the_toolset():
    tasks = sorted({i.task_id: i for i in catalog.load_all() if i.meta_info.bench_subset != "EEGAgentBench"}.items())
    assert len(tasks) >= 80
    for task_id, example in tasks:
        p = load_plan(PROJECT_ROOT, task_id)
        assert p.agent is None or p.agent in SUBAGENTS, task_id
        keys = set(example.eval_config.target_keys()) - {"full_text"}
        assert keys <= set(p.report), f"{task_id}: the report misses {keys - set(p.report)}"
        for step in p.steps:
            spec = braintools.TOOLS.get(step.tool)
            assert spec is not None, f"{task_id}: unknown tool {step.tool}"
            unknown = set(step.args) - set(spec.parameters["properties"])
            assert not unknown, f"{task_id}.{step.alias}: {step.tool} has no {unknown}"
            try:
                validate({**spec.parameters, "required": []}, {k: v for k, v in step.args.items() if not _templated(v)}, step.alias)
            except SchemaError as exc:
                pytest.fail(f"{task_id}.{step.alias}: {exc}")


def _templated(value: object) -> bool:
    """Whether a plan argument is filled in per instance (its type is known only then)."""
    if isinstance(value, str):
        return value.startswith("$") or "{" in value
    if isinstance(value, dict):
        return "from" in value or any(_templated(v) for v in value.values())
    if isinstance(value, list):
        return any(_templated(v) for v in value)
    return False
