"""The toolset as a whole: generic (no task's solution in it), documented, bounded, confined."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import braintools
from braintools import paths
from braintools.protocol import RESULT_MARKER, serve
from braintools.state import STATE
from runner.core.paths import PROJECT_ROOT
from runner.paradigms.brainagent.agents import all_agents

PACKAGE = Path(braintools.__file__).resolve().parent
TASK_IDS = sorted(p.stem for p in (PROJECT_ROOT / "instances" / "tasks").glob("*.json"))


def test_no_tool_mentions_a_task_or_reads_ground_truth():
    assert len(TASK_IDS) >= 82  # every task spec, EEGAgentBench T1 and T2 included
    forbidden = [*TASK_IDS, "ground_truth", "gt_value", "eval_config", "reference_scripts", "reference_plans", "instances/"]
    for source in PACKAGE.rglob("*.py"):
        text = source.read_text(encoding="utf-8")
        found = [word for word in forbidden if word in text]
        assert not found, f"{source.relative_to(PROJECT_ROOT)} mentions {found}"
    schemas = json.dumps(braintools.schemas())
    assert not [t for t in TASK_IDS if t in schemas]
    assert not re.search(r"\b(fa|sa|nc|pi)_[a-z0-9]+_[a-z0-9]+", schemas)


def test_every_tool_is_documented_and_reachable_by_a_subagent():
    groups = {g for a in all_agents() for g in a.groups}
    for spec in braintools.specs():
        assert spec.description.strip(), spec.name
        assert spec.group in groups, f"{spec.name}: no subagent has group {spec.group}"
        for name, prop in spec.parameters["properties"].items():
            assert prop.get("description"), f"{spec.name}.{name} is undocumented"
    for agent in all_agents():
        assert braintools.specs(agent.groups), agent.name


def test_ids_never_collide_and_vanish_with_a_reset():
    first = braintools.call("load_recording", {"path": "/input/eegmmidb/S001R02.edf"})
    second = braintools.call("load_recording", {"path": "eegmmidb/S001R02.edf"})
    assert (first["recording"]["id"], second["recording"]["id"]) == ("rec1", "rec2")
    assert "this exact call" not in json.dumps(second)
    STATE.reset()
    lost = braintools.call("recording_info", {"recording": "rec1"})
    assert lost["error"]["code"] == "unknown_id"


def test_wrong_kind_unknown_tool_and_bad_arguments_are_tool_errors():
    braintools.call("load_recording", {"path": "/input/eegmmidb/S001R02.edf"})
    assert braintools.call("filter_signal", {"source": "rec1", "l_freq": 1})["error"]["code"] == "wrong_kind"
    assert braintools.call("no_such_tool", {})["error"]["code"] == "unsupported"
    assert braintools.call("pick_channels", {"recording": 5})["error"]["code"] == "bad_argument"
    assert braintools.call("pick_channels", {"recording": "rec1", "extra": 1})["error"]["argument"] == "extra"
    assert braintools.call("pick_channels", "rec1")["error"]["code"] == "bad_argument"


@pytest.mark.parametrize("path", ["/etc/shadow", "/input/../etc/passwd", "../../../etc/hostname", "/proc/self/environ"])
def test_reads_outside_the_input_root_are_forbidden(path):
    assert braintools.call("inspect_file", {"path": path})["error"]["code"] == "forbidden_path"


def test_a_symlink_out_of_the_input_root_is_forbidden(tmp_path):
    root = tmp_path / "in"
    root.mkdir()
    (root / "link.edf").symlink_to("/etc/hostname")
    paths.use_roots(root, tmp_path / "out")
    assert braintools.call("load_recording", {"path": "/input/link.edf"})["error"]["code"] == "forbidden_path"


def test_huge_requests_are_refused_before_allocating():
    braintools.call("load_recording", {"path": "/input/eegmmidb/S001R02.edf"})
    braintools.call("pick_channels", {"recording": "rec1"})
    refused = braintools.call("resample_signal", {"source": "sig1", "sfreq": 1e7})
    assert refused["error"]["code"] == "budget_exceeded"


def test_summary_is_bounded_and_names_ids(capsys):
    for _ in range(60):
        braintools.call("load_recording", {"path": "/input/eegmmidb/S001R02.edf"})
    text = STATE.summary(800)
    assert len(text) <= 800 and "rec60" in text and "older lines left out" in text


def test_serve_prints_one_bounded_marker_line(capsys):
    serve(json.dumps({"tool": "load_recording", "arguments": {"path": "/input/eegmmidb/S001R02.edf"}}), 300)
    serve("not json", 300)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(line.startswith(RESULT_MARKER) for line in lines)
    first, second = (json.loads(line[len(RESULT_MARKER):]) for line in lines)
    assert len(lines[0]) <= 300 + len(RESULT_MARKER) and first["recording"]["id"] == "rec1"
    assert second["error"]["code"] == "bad_argument"
