"""The ground-truth result cache and the subset manifests, on a made-up task whose script
counts its own runs in a marker file."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.benchmark import catalog
from runner.benchmark.truth import (
    TruthError,
    cache_key,
    check,
    default_cache_dir,
    generate,
    load_task,
    provenance,
)

COUNTING_SCRIPT = '''
def run(inputs, params):
    if params.get("fail"):
        raise RuntimeError("asked to fail")
    with open(params["marker"], "a") as marker:  # one line per run
        marker.write(params["word"] + "\\n")
    return {"length": len(open(inputs[0]).read()) * params["scale"], "word": params["word"]}
'''


def _spec(marker: Path, bindings: list[tuple[str, str, int, str]]) -> dict:
    return {
        "task_id": "sa_count",
        "bench_subset": "Sleep Assessment",
        "difficulty": "easy",
        "difficulty_reason": "toy", "kind": "recipe",
        "original_dataset": "toy",
        "script": "reference_scripts/sa_count.py",
        "instruction": "Scale by {scale}, say {word}.",
        "parser_prompt": "length, word",
        "metrics": [
            {"metric_id": "length", "type": "numeric_check", "target_key": "length", "weight": 0.5,
             "params": {"tolerance": 0}, "tolerance_reason": "exact count"},
            {"metric_id": "word", "type": "categorical_check", "target_key": "word", "weight": 0.5,
             "params": {"classes": ["a", "b"]}},
        ],
        "bindings": [
            {"case": case, "data_path": [path], "params": {"scale": scale, "word": word, "marker": str(marker)}}
            for case, path, scale, word in bindings
        ],
    }


class Toy:
    def __init__(self, tmp_path: Path) -> None:
        self.project, self.data = tmp_path / "project", tmp_path / "data"
        self.marker = tmp_path / "runs.txt"
        (self.project / "instances/tasks").mkdir(parents=True)
        (self.project / "reference_scripts").mkdir()
        self.script.write_text(COUNTING_SCRIPT)
        (self.data / "toy").mkdir(parents=True)
        (self.data / "toy/a.txt").write_text("abcde")
        (self.data / "toy/b.txt").write_text("xy")
        self.write([("01", "toy/a.txt", 2, "a"), ("02", "toy/b.txt", 3, "b"), ("03", "toy/a.txt", 5, "b")])

    @property
    def script(self) -> Path:
        return self.project / "reference_scripts/sa_count.py"

    def write(self, bindings) -> None:
        spec = _spec(self.marker, bindings)
        (self.project / "instances/tasks/sa_count.json").write_text(json.dumps(spec))

    def runs(self) -> int:
        return len(self.marker.read_text().splitlines()) if self.marker.exists() else 0

    def instances(self) -> dict[str, bytes]:
        folder = self.project / "instances/sleep_assessment"
        return {p.name: p.read_bytes() for p in sorted(folder.glob("*.json"))}

    def generate(self, **kwargs):
        return generate(self.project, self.data, progress=False, **kwargs)


@pytest.fixture
def toy(tmp_path) -> Toy:
    return Toy(tmp_path)


def test_second_generate_runs_no_script_and_writes_the_same_files(toy):
    toy.generate(jobs=2)
    assert toy.runs() == 3
    first = toy.instances()
    assert len(first) == 3 and len(list(default_cache_dir(toy.project).glob("*.json"))) == 3
    toy.generate(jobs=2)
    assert toy.runs() == 3  # every result came from the cache
    assert toy.instances() == first


def test_changing_the_script_invalidates_every_entry(toy):
    toy.generate()
    toy.script.write_text(COUNTING_SCRIPT + "\n# a comment changes the sha256\n")
    toy.generate()
    assert toy.runs() == 6


def test_changing_an_input_or_params_invalidates_only_that_binding(toy):
    toy.generate()
    (toy.data / "toy/b.txt").write_text("xyz")  # only binding 02 reads b.txt
    toy.generate()
    assert toy.runs() == 4
    assert json.loads(toy.instances()["sa_count-02.json"])["eval_config"]["metrics"][0]["params"]["gt_value"] == 9
    toy.write([("01", "toy/a.txt", 2, "a"), ("02", "toy/b.txt", 3, "b"), ("03", "toy/a.txt", 6, "b")])
    toy.generate()
    assert toy.runs() == 5


def test_no_cache_runs_every_script(toy):
    toy.generate()
    toy.generate(cache=False)
    assert toy.runs() == 6


def test_check_never_reads_the_cache(toy):
    toy.generate()
    assert check(toy.project, toy.data, progress=False) == []
    assert toy.runs() == 6  # check ran all three scripts again

    # poison binding 01's entry: generate trusts it, check regenerates and catches it
    task = load_task(toy.project / "instances/tasks/sa_count.json")
    entry = default_cache_dir(toy.project) / f"{cache_key(provenance(task, task.bindings[0], toy.project, toy.data))}.json"
    poisoned = json.loads(entry.read_text())
    poisoned["result"]["length"] = 999
    entry.write_text(json.dumps(poisoned))
    toy.generate()
    assert toy.runs() == 6
    problems = check(toy.project, toy.data, progress=False)
    assert any(p.startswith("differs:") and "sa_count-01.json" in p and "999" in p for p in problems), problems


def test_unreadable_cache_entry_is_a_miss(toy):
    toy.generate()
    for entry in default_cache_dir(toy.project).glob("*.json"):
        entry.write_text("{not json")
    toy.generate()
    assert toy.runs() == 6
    toy.generate()
    assert toy.runs() == 6  # the broken entries were replaced


def test_results_before_a_failure_stay_cached(toy):
    spec_path = toy.project / "instances/tasks/sa_count.json"
    spec = json.loads(spec_path.read_text())
    spec["bindings"][2]["params"]["fail"] = True
    spec_path.write_text(json.dumps(spec))
    with pytest.raises(TruthError, match="sa_count-03"):
        toy.generate(jobs=1)
    assert toy.runs() == 2
    del spec["bindings"][2]["params"]["fail"]
    spec_path.write_text(json.dumps(spec))
    toy.generate(jobs=1)
    assert toy.runs() == 3  # only the fixed binding ran


# --- manifests ----------------------------------------------------------------------------


def test_generate_writes_subset_manifests(toy):
    toy.generate()
    folder = toy.project / "instances/manifests"
    assert sorted(p.name for p in folder.glob("*.json")) == [
        "eegagentbench.json", "foundational_analysis.json", "kept.json", "neurocognitive_assessment.json",
        "physiological_integration.json", "sleep_assessment.json"]
    sleep = json.loads((folder / "sleep_assessment.json").read_text())
    assert sleep["instances"] == 3 and sleep["tasks"] == 1
    assert sleep["by_task"]["sa_count"] == {"difficulty": "easy", "kind": "recipe", "instances": 3,
                                            "units": {"categorical_check": 3, "numeric_check": 3}}
    assert sleep["by_difficulty"] == {"easy": {"tasks": 1, "instances": 3}}
    assert sleep["by_kind"] == {"recipe": {"tasks": 1, "instances": 3}}
    assert json.loads((folder / "kept.json").read_text()) == {
        "sa_count": {"bindings": 3, "instances": 3, "rejected": {}}}
    assert sleep["by_unit"]["numeric_check"] == {"tasks": 1, "instances": 3}
    instances = catalog.load_all(toy.project / "instances")
    assert sleep["instance_set_hash"] == catalog.instance_set_hash(instances)
    empty = json.loads((folder / "foundational_analysis.json").read_text())
    assert empty["instances"] == 0 and empty["by_task"] == {}


def test_check_reports_stale_and_missing_manifests(toy):
    toy.generate()
    folder = toy.project / "instances/manifests"
    assert check(toy.project, toy.data, progress=False) == []

    # a binding dropped by hand (instance file and spec) without regenerating: manifest stale
    toy.write([("01", "toy/a.txt", 2, "a"), ("02", "toy/b.txt", 3, "b")])
    (toy.project / "instances/sleep_assessment/sa_count-03.json").unlink()
    (folder / "physiological_integration.json").unlink()
    problems = check(toy.project, toy.data, progress=False)
    assert any(p.startswith("differs: instances/manifests/sleep_assessment.json (stale") and "instances" in p
               for p in problems), problems
    assert any(p.startswith("missing: instances/manifests/physiological_integration.json") for p in problems)
    assert "differs: instances/manifests/kept.json (stale kept-share record: sa_count.bindings: committed 3, " \
           "regenerated 2)" in problems
    assert len(problems) == 3, problems

    toy.generate(tasks=["sa_count"])  # a task selection rewrites its subset's manifest only
    problems = check(toy.project, toy.data, progress=False)
    assert problems == [("missing: instances/manifests/physiological_integration.json "
                         "(subset manifest; run `eegbench truth`)")]
    toy.generate()
    assert check(toy.project, toy.data, progress=False) == []
