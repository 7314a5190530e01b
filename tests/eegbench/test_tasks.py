"""The Inspect tasks' dataset and argument checks (no sample is run here)."""
from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

from eegbench.tasks import TaskArgumentError, codeact
from runner.benchmark import catalog

CASES = ["fa_alpha_relpower-02", "fa_alpha_relpower-01"]


def test_the_tasks_are_registered_under_the_eegbench_package(tmp_path):
    [point] = [p for p in entry_points(group="inspect_ai") if p.name == "eegbench"]
    assert point.value == "eegbench.tasks"
    # As `inspect eval` finds them: by the entry point, outside the source tree (whose
    # eegbench.egg-info, found first from there, does not say the install is editable).
    names = subprocess.run([sys.executable, "-c", LOOKUP], cwd=tmp_path, text=True, capture_output=True, check=True)
    assert names.stdout.split() == ["eegbench/codeact", "eegbench/hybrid", "eegbench/brainagent", "eegbench/tools"]


LOOKUP = """
from inspect_ai._util.registry import registry_info, registry_lookup
for name in ("codeact", "hybrid", "brainagent", "tools"):
    print(registry_info(registry_lookup("task", "eegbench/" + name)).name)
"""


def test_a_sample_is_an_instance_with_its_reference_values():
    task = codeact(set=",".join(CASES))
    samples = list(task.dataset)
    assert [s.id for s in samples] == sorted(CASES)
    instances = {i.case_id: i for i in catalog.select(catalog.load_all(), CASES)}
    for sample in samples:
        instance = instances[sample.id]
        assert sample.input == instance.agent_input.instruction
        metrics = instance.eval_config.metrics
        assert list(json.loads(sample.target)) == [m.metric_id for m in metrics]
        assert sample.metadata == {"task_id": "fa_alpha_relpower", "bench_subset": instance.meta_info.bench_subset,
                                   "difficulty": instance.meta_info.difficulty}
    assert task.metadata["eegbench_paradigm"] == "codeact"


def test_set_as_inspect_reads_a_comma_list_and_narrowing_by_subset_and_task():
    assert [s.id for s in codeact(set=CASES).dataset] == sorted(CASES)  # -T set=a,b arrives as a list
    check = {s.id for s in codeact(set="check").dataset}
    narrowed = {s.id for s in codeact(set="check", task="fa_*").dataset}
    assert narrowed and narrowed < check and all(c.startswith("fa_") for c in narrowed)
    sleep = list(codeact(set="check", subset="Sleep Assessment").dataset)
    assert sleep and {s.metadata["bench_subset"] for s in sleep} == {"Sleep Assessment"}


@pytest.mark.parametrize(("arguments", "message"), [
    ({"set": "no_such_case"}, "eegbench/codeact: -T set: SET: no instance matches no_such_case"),
    ({"subset": "no_such"}, "-T subset='no_such' is not a subset; the subsets are "),
    ({"task": "no_such_task"}, "-T task='no_such_task' is not a task id"),
    ({"subset": "sleep_assessment", "task": "fa_alpha_relpower"},
     "-T subset='sleep_assessment', task='fa_alpha_relpower' select no instance together"),
    ({"jobs": 0}, "-T jobs=0: give a whole number of at least 1"),
    ({"sandbox": "vm"}, "-T sandbox='vm' is not one of "),
    ({"run": "a b"}, "-T run: RUN='a b': use letters"),
    ({"subset": ["a", "b"]}, "-T subset=['a', 'b']: give one name"),
    ({"controls": {"max_rounds": 0}}, "-T controls: max_rounds: Input should be greater than or equal to 1"),
    ({"controls": {"rounds": 3}}, "-T controls: no control named rounds; the controls are "),
    ({"controls": "max_rounds=3"}, "-T controls='max_rounds=3': give a mapping"),
])
def test_bad_arguments_stop_the_task_naming_the_argument(arguments, message):
    with pytest.raises(TaskArgumentError) as caught:
        codeact(**arguments)
    assert message in str(caught.value) and caught.value.message == str(caught.value)
