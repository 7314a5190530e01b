"""Ground-truth generation: real task specs and reference scripts on the real recordings,
plus small made-up tasks for the error paths."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from runner.benchmark import catalog, data, truth
from runner.benchmark.truth import TruthError, check, generate, load_task, load_tasks
from runner.core.paths import Environment
from runner.sandbox import jit_cache
from validation.instance import load_instance

PROJECT = Path(__file__).resolve().parents[3]
REAL_TASKS = ("sa_sleep_metrics", "pi_alpha_reactivity")  # fast: pandas and scipy only


@pytest.fixture(scope="module")
def data_root():
    """The project's recording cache (fetched first on a machine that has none)."""
    root = Environment.from_os().paths.data_root
    needed = ("yasa/sample_data_sri.csv", "plux/eeg_sample_closed_open_eyes.h5")
    if not all((root / dest).is_file() for dest in needed):
        data.fetch(root, progress=False)
    return root


def _project_with(tmp_path: Path, task_ids) -> Path:
    for task_id in task_ids:
        spec = PROJECT / "instances" / "tasks" / f"{task_id}.json"
        script = PROJECT / "reference_scripts" / f"{task_id}.py"
        (tmp_path / "instances" / "tasks").mkdir(parents=True, exist_ok=True)
        (tmp_path / "reference_scripts").mkdir(exist_ok=True)
        shutil.copy(spec, tmp_path / "instances" / "tasks" / spec.name)
        shutil.copy(script, tmp_path / "reference_scripts" / script.name)
    return tmp_path


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted((root / "instances").rglob("*.json"))
        if not set(catalog.NOT_INSTANCE_DIRS) & set(p.parts)
    }


@pytest.fixture(scope="module")
def generated(tmp_path_factory, data_root):
    project = _project_with(tmp_path_factory.mktemp("project"), REAL_TASKS)
    paths = generate(project, data_root, jobs=2, progress=False)
    return project, paths, _snapshot(project)


def test_generate_writes_one_file_per_binding(generated):
    project, paths, files = generated
    specs = load_tasks(project)
    assert len(paths) == sum(len(t.bindings) for t in specs) == 22
    assert sorted(files) == sorted(str(p.relative_to(project)) for p in paths)
    assert "instances/sleep_assessment/sa_sleep_metrics-01.json" in files
    assert "instances/physiological_integration/pi_alpha_reactivity-08.json" in files


def test_generating_twice_gives_byte_identical_files(generated, data_root):
    project, _, first = generated
    # one worker instead of two, every script run again (the cache would hide nondeterminism)
    generate(project, data_root, jobs=1, progress=False, cache=False)
    assert _snapshot(project) == first
    assert check(project, data_root, jobs=2, progress=False) == []


def test_instance_carries_ground_truth_and_provenance(generated, data_root):
    project, _, _ = generated
    inst = load_instance(project / "instances/sleep_assessment/sa_sleep_metrics-01.json")
    assert inst.case_id == "sa_sleep_metrics-01" and inst.task_id == "sa_sleep_metrics"
    # BrainBench's runner weighs by the number; the word stays for people and for eegbench
    assert (inst.meta_info.difficulty, inst.meta_info.difficult) == ("easy", 1)
    assert "ground_truth" not in json.dumps(inst.model_dump()["eval_config"])
    assert "subject sbj01 " in inst.agent_input.instruction
    truths = {m.metric_id: m.params["gt_value"] for m in inst.eval_config.metrics}
    # sbj01: 882 epochs, 801 asleep (the SRI pipeline reports SE 90.82); REM 130 epochs after onset
    assert truths == {"sleep_efficiency": 90.82, "rem_latency_min": 65.0}
    assert inst.eval_config.metrics[0].params["tolerance"] == 0.01
    assert inst.eval_config.metrics[0].model_extra["tolerance_reason"]
    ref = inst.reference
    manifest = {item.dest: item.sha256 for _, item in data.load_manifest().files()}
    assert ref.inputs == {"yasa/sample_data_sri.csv": manifest["yasa/sample_data_sri.csv"]}
    assert ref.script == "reference_scripts/sa_sleep_metrics.py"
    assert ref.script_sha256 == data.sha256_file(project / ref.script)
    assert set(ref.versions) == {"numpy", "pandas"} and ref.params == {"subject": "sbj01"}


def test_check_reports_changed_missing_and_extra_files(generated, data_root, tmp_path):
    source, _, _ = generated
    project = tmp_path / "copy"
    shutil.copytree(source, project)
    changed = project / "instances/physiological_integration/pi_alpha_reactivity-03.json"
    raw = json.loads(changed.read_text())
    raw["eval_config"]["metrics"][0]["params"]["gt_value"] = 1.23
    changed.write_text(json.dumps(raw, indent=2, sort_keys=True) + "\n")
    (project / "instances/sleep_assessment/sa_sleep_metrics-14.json").unlink()
    extra = project / "instances/sleep_assessment/sa_sleep_metrics-99.json"
    extra.write_text("{}")

    problems = check(project, data_root, progress=False)
    assert len(problems) == 3, problems
    differs = next(p for p in problems if p.startswith("differs:"))
    assert "pi_alpha_reactivity-03.json" in differs and "gt_value" in differs and "1.23" in differs
    assert any(p.startswith("missing:") and "sa_sleep_metrics-14.json" in p for p in problems)
    assert any(p.startswith("extra:") and "sa_sleep_metrics-99.json" in p for p in problems)

    # a task-restricted check only looks at that task's files
    only_pi = check(project, data_root, tasks=["pi_alpha_reactivity"], progress=False)
    assert len(only_pi) == 1 and "pi_alpha_reactivity-03" in only_pi[0]

    generate(project, data_root, jobs=2, progress=False)
    assert not extra.exists()  # stale file of a binding that no longer exists is removed
    assert check(project, data_root, progress=False) == []


def test_dropping_a_binding_removes_only_its_file(generated, data_root, tmp_path):
    source, _, before = generated
    project = tmp_path / "copy"
    shutil.copytree(source, project)
    spec_path = project / "instances/tasks/sa_sleep_metrics.json"
    spec = json.loads(spec_path.read_text())
    spec["bindings"] = [b for b in spec["bindings"] if b["case"] != "07"]
    spec_path.write_text(json.dumps(spec))
    generate(project, data_root, tasks=["sa_sleep_metrics"], progress=False)
    after = _snapshot(project)
    assert "instances/sleep_assessment/sa_sleep_metrics-07.json" not in after
    assert {k: v for k, v in before.items() if "sa_sleep_metrics-07" not in k} == after


# --- made-up tasks: error paths, without the real recordings ----------------------------

TOY_SCRIPT = '''
import os
def run(inputs, params):
    text = open(inputs[0]).read()
    if params.get("fail"):
        raise RuntimeError("asked to fail")
    return {"length": len(text) * params["scale"], "threads": os.environ.get("OMP_NUM_THREADS")}
'''


def _toy_spec(**changes):
    spec = {
        "task_id": "fa_toy",
        "bench_subset": "Foundational Analysis",
        "difficulty": "easy",
        "difficulty_reason": "toy", "kind": "recipe",
        "original_dataset": "toy",
        "script": "reference_scripts/fa_toy.py",
        "instruction": "Scale the length by {scale}.",
        "parser_prompt": "length",
        "metrics": [
            {"metric_id": "length", "type": "numeric_check", "target_key": "length", "weight": 0.5,
             "params": {"tolerance": 0}, "tolerance_reason": "exact count"},
            {"metric_id": "threads", "type": "categorical_check", "target_key": "threads",
             "weight": 0.5, "params": {}},
        ],
        "bindings": [{"case": "01", "data_path": ["toy/a.txt"], "params": {"scale": 2}}],
    }
    spec.update(changes)
    return spec


@pytest.fixture
def toy(tmp_path):
    project, root = tmp_path / "project", tmp_path / "data"
    (project / "instances/tasks").mkdir(parents=True)
    (project / "reference_scripts").mkdir()
    (project / "reference_scripts/fa_toy.py").write_text(TOY_SCRIPT)
    (root / "toy").mkdir(parents=True)
    (root / "toy/a.txt").write_text("abcde")

    def write(**changes) -> Path:
        path = project / "instances/tasks/fa_toy.json"
        path.write_text(json.dumps(_toy_spec(**changes)))
        return path

    return project, root, write


def test_scripts_run_with_pinned_blas_threads(toy):
    project, root, write = toy
    write()
    (path,) = generate(project, root, progress=False)
    truths = {m.metric_id: m.params["gt_value"] for m in load_instance(path).eval_config.metrics}
    assert truths == {"length": 10, "threads": "1"}
    assert load_instance(path).agent_input.instruction == "Scale the length by 2."


# Reports whether the worker has the compile cache's hook in place for numba's first import.
HOOK_SCRIPT = '''
import sys
def run(inputs, params):
    hooked = any(type(finder).__name__ == "_AfterImport" for finder in sys.meta_path)
    return {"length": len(open(inputs[0]).read()) * params["scale"], "threads": "hooked" if hooked else "plain"}
'''


def test_script_workers_load_numba_code_from_the_local_compile_cache_once_built(toy):
    project, root, write = toy
    (project / "reference_scripts/fa_toy.py").write_text(HOOK_SCRIPT)
    write()

    def hooked() -> str:
        (path,) = generate(project, root, progress=False, cache=False)
        return next(m.params["gt_value"] for m in load_instance(path).eval_config.metrics if m.metric_id == "threads")

    assert hooked() == "plain"  # no cache built: numba compiles as it would anyway
    built = jit_cache.cache_root(project / ".cache") / jit_cache.cache_key({"name": "local"})
    built.mkdir(parents=True)
    (built / jit_cache.MANIFEST).write_text(json.dumps({"backend": "local", "sources": {}}))
    assert hooked() == "hooked"


@pytest.mark.parametrize("changes, field", [
    ({"difficulty": "trivial"}, "difficulty"),
    ({"instrucion": "typo"}, "instrucion"),
    ({"bench_subset": "Sleep Assessment"}, "task_id of a Sleep Assessment task must start with 'sa_'"),
    ({"metrics": [{"metric_id": "length", "type": "numeric_check", "target_key": "length",
                   "weight": 1.0, "params": {"tolerance": 0.1}}]}, "tolerance_reason"),
    ({"metrics": [{"metric_id": "length", "type": "numeric_chek", "target_key": "length",
                   "weight": 1.0, "params": {}}]}, "metrics.0.type"),
    ({"metrics": [{"metric_id": "length", "type": "categorical_check", "target_key": "length",
                   "weight": 0.7, "params": {}}]}, "weights sum to 0.7"),
    ({"bindings": [{"case": "01", "data_path": ["toy/a.txt"], "params": {}}]}, "case 01"),
    ({"bindings": [{"case": "01", "data_path": ["toy/a.txt"], "parms": {"scale": 1}}]},
     "bindings.0.parms"),
])
def test_bad_spec_error_names_the_file_and_the_field(toy, changes, field):
    _, _, write = toy
    path = write(**changes)
    with pytest.raises(TruthError) as err:
        load_task(path)
    assert str(path) in str(err.value) and field in str(err.value)


def test_script_failure_names_the_case(toy):
    project, root, write = toy
    write(bindings=[{"case": "07", "data_path": ["toy/a.txt"], "params": {"scale": 1, "fail": True}}])
    with pytest.raises(TruthError, match=r"fa_toy-07: fa_toy.py failed: RuntimeError: asked to fail"):
        generate(project, root, progress=False)
    assert not (project / "instances/foundational_analysis").exists()


def test_missing_target_key_and_missing_input_are_named(toy):
    project, root, write = toy
    write(metrics=[{"metric_id": "m", "type": "categorical_check", "target_key": "nope",
                    "weight": 1.0, "params": {}}])
    with pytest.raises(TruthError, match="fa_toy-01: script result lacks 'nope'"):
        generate(project, root, progress=False)
    write(bindings=[{"case": "02", "data_path": ["toy/absent.txt"], "params": {"scale": 1}}])
    with pytest.raises(TruthError, match="fa_toy-02: input.*absent.txt"):
        generate(project, root, progress=False)


def test_a_metric_with_when_is_kept_only_where_the_result_meets_it_and_weights_rescale(toy):
    project, root, write = toy
    metrics = _toy_spec()["metrics"]
    metrics[0]["when"] = {"threads": "1"}  # the script reports OMP_NUM_THREADS=1: kept
    write(metrics=[*metrics, {"metric_id": "never", "type": "categorical_check", "target_key": "threads",
                              "weight": 0.0, "params": {}, "when": {"threads": "8"}}])
    (path,) = generate(project, root, progress=False)
    assert {m.metric_id: m.weight for m in load_instance(path).eval_config.metrics} == {"length": 0.5, "threads": 0.5}
    metrics[1]["when"] = {"threads": "8"}  # dropped: the length metric alone, its weight rescaled to 1
    write(metrics=metrics)
    (path,) = generate(project, root, progress=False)
    assert {m.metric_id: m.weight for m in load_instance(path).eval_config.metrics} == {"length": 1.0}
    metrics[0]["when"] = {"status": "ok"}
    write(metrics=metrics)
    with pytest.raises(TruthError, match=r"fa_toy-01: metric length: when names \['status'\]"):
        generate(project, root, progress=False)
    metrics[0]["when"] = {"threads": "8"}
    write(metrics=metrics)
    with pytest.raises(TruthError, match="fa_toy-01: no metric with weight applies"):
        generate(project, root, progress=False)


def test_unknown_task_is_named(toy):
    project, root, _ = toy
    with pytest.raises(TruthError, match="fa_nothing"):
        generate(project, root, tasks=["fa_nothing"], progress=False)


def test_every_task_spec_of_the_project_is_valid():
    specs = load_tasks(PROJECT)
    assert {s.bench_subset for s in specs} == set(truth.ALL_SUBSETS)
    for spec in specs:
        assert (PROJECT / spec.script).is_file(), spec.task_id


def test_a_blind_solve_is_recorded_in_the_spec_and_names_cases_of_the_task():
    spec = load_task(PROJECT / "instances/tasks/nc_erp_image.json")
    assert spec.blind_validation is not None and spec.blind_validation.solved
    assert set(spec.blind_validation.cases) <= {spec.case_id(b) for b in spec.bindings}
    data = json.loads((PROJECT / "instances/tasks/nc_erp_image.json").read_text())
    data["blind_validation"]["cases"] = ["nc_erp_image-01", "fa_alpha_relpower-01"]
    with pytest.raises(ValueError, match=r"not cases of this task: \['fa_alpha_relpower-01'\]"):
        truth.TaskSpec.model_validate(data)
    data["blind_validation"]["cases"] = ["nc_erp_image-01"]
    with pytest.raises(ValueError, match="at least 2"):
        truth.TaskSpec.model_validate(data)


def test_every_brainbench_subset_task_was_solved_blind_on_two_cases():
    """A task is accepted only after someone who saw just its instruction and inputs solved it."""
    tasks = [t for t in load_tasks(PROJECT) if t.bench_subset in truth.SUBSETS]
    assert len(tasks) >= 80
    unsolved = [t.task_id for t in tasks if t.blind_validation is None or not t.blind_validation.solved]
    assert unsolved == []


ENSEMBLE_SCRIPT = '''
def run(inputs, params):
    n = len(open(inputs[0]).read())
    spread = params["spread"]
    return {"power": {"welch": n, "multitaper": n + spread}, "band": {"welch": "alpha", "multitaper": params["band"]}}
'''


def test_an_ensemble_task_keeps_agreeing_bindings_with_a_derived_tolerance_and_rejects_the_rest(toy, caplog):
    project, root, write = toy
    (project / "reference_scripts/fa_toy.py").write_text(ENSEMBLE_SCRIPT)
    write(instruction="Report the power and the dominant band.", metrics=[
        {"metric_id": "power", "type": "numeric_check", "target_key": "power", "weight": 0.5, "params": {},
         "tolerance_reason": "the spread of the pipelines", "ensemble": {"spread_factor": 1.0, "max_tolerance": 0.5}},
        {"metric_id": "band", "type": "categorical_check", "target_key": "band", "weight": 0.5, "params": {},
         "ensemble": {}},
    ], bindings=[
        {"case": "01", "data_path": ["toy/a.txt"], "params": {"spread": 0.2, "band": "alpha"}},
        {"case": "02", "data_path": ["toy/a.txt"], "params": {"spread": 2.0, "band": "alpha"}},  # too wide
        {"case": "03", "data_path": ["toy/a.txt"], "params": {"spread": 0.0, "band": "theta"}},  # disagrees
    ])
    with caplog.at_level("WARNING", logger="runner.benchmark.truth"):
        paths = generate(project, root, progress=False, cache=False)
    assert [p.name for p in paths] == ["fa_toy-01.json"]
    metrics = {m.metric_id: m.params for m in load_instance(paths[0]).eval_config.metrics}
    assert metrics["power"] == {"gt_value": 5.1, "tolerance": 0.2}  # median of 5 and 5.2; spread 0.2
    assert metrics["band"] == {"gt_value": "alpha"}
    assert load_instance(paths[0]).reference.ensembles == {"power": {"welch": 5, "multitaper": 5.2},
                                                           "band": {"welch": "alpha", "multitaper": "alpha"}}
    messages = [r.getMessage() for r in caplog.records]
    assert any("fa_toy-02: metric power: spread 2 gives tolerance 2 > max_tolerance 0.5" in m for m in messages)
    assert any("fa_toy-03: metric band: the pipelines disagree" in m for m in messages)
    assert any("task fa_toy keeps 1 of 3 bindings (33%)" in m for m in messages)
    kept = json.loads((project / "instances/manifests/kept.json").read_text())["fa_toy"]
    assert kept["bindings"] == 3 and kept["instances"] == 1
    assert kept["rejected"]["fa_toy-02"].startswith("metric power: spread 2 gives tolerance 2 > max_tolerance 0.5")
    assert kept["rejected"]["fa_toy-03"].startswith("metric band: the pipelines disagree")
    assert check(project, root, progress=False) == []  # deterministic, rejections included
    (project / "instances/manifests/kept.json").write_text("{}\n")  # a record that no longer says why
    assert check(project, root, progress=False) == [
        "differs: instances/manifests/kept.json (stale kept-share record: fa_toy: committed null, "
        "regenerated {\"bindings\": 3, \"instances\": 1, \"rejected\": {\"fa_toy-02\": \"metric power: spre...)"]


def test_a_set_ensemble_keeps_a_binding_only_when_every_pipeline_finds_the_same_set(toy):
    project, root, write = toy
    (project / "reference_scripts/fa_toy.py").write_text(
        "def run(inputs, params):\n"
        "    return {'bad': {'zscore': ['T7', 'Fp1'], 'corr': params['corr']}}\n")
    write(instruction="Which channels are unusable?", metrics=[
        {"metric_id": "bad", "type": "set_match_check", "target_key": "bad", "weight": 1.0,
         "params": {"match_mode": "exact"}, "ensemble": {}}],
        bindings=[{"case": "01", "data_path": ["toy/a.txt"], "params": {"corr": ["fp1", "T7"]}},
                  {"case": "02", "data_path": ["toy/a.txt"], "params": {"corr": ["T7"]}}])
    paths = generate(project, root, progress=False, cache=False)
    assert [p.name for p in paths] == ["fa_toy-01.json"]
    assert load_instance(paths[0]).eval_config.metrics[0].params["gt_value"] == ["fp1", "T7"]  # corr: the first pipeline by name

def test_an_ensemble_metric_may_not_write_its_tolerance(toy):
    _, _, write = toy
    with pytest.raises(ValueError, match="derived from the ensemble's spread"):
        truth.TaskSpec.model_validate(_toy_spec(metrics=[
            {"metric_id": "length", "type": "numeric_check", "target_key": "length", "weight": 1.0,
             "params": {"tolerance": 0.1}, "tolerance_reason": "x", "ensemble": {"max_tolerance": 1.0}}]))
