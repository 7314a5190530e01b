import pytest

from runner.benchmark import catalog
from validation.errors import UserError
from validation.instance import Instance


def inst(case, subset="Sleep Assessment", task="sa_x"):
    return Instance.model_validate({
        "meta_info": {"case_id": case, "bench_subset": subset, "task_id": task},
        "agent_input": {"data_path": "a.edf", "instruction": "i"},
        "eval_config": {"metrics": []},
    })


def test_select_by_subset_task_case_and_prefix():
    items = [inst("sa_x-01"), inst("sa_x-02"), inst("fa_y-01", "Foundational Analysis", "fa_y")]
    assert [i.case_id for i in catalog.select(items, ["sleep_assessment"])] == ["sa_x-01", "sa_x-02"]
    assert [i.case_id for i in catalog.select(items, ["fa_y"])] == ["fa_y-01"]
    assert [i.case_id for i in catalog.select(items, ["sa_x-02"])] == ["sa_x-02"]
    assert [i.case_id for i in catalog.select(items, ["sa_*"])] == ["sa_x-01", "sa_x-02"]
    assert len(catalog.select(items, [])) == 3


def test_check_is_the_first_instance_of_each_benchmark_task_and_all_is_the_benchmark():
    items = [inst("sa_x-02"), inst("sa_x-01"), inst("fa_y-03", "Foundational Analysis", "fa_y"),
             inst("fa_y-02", "Foundational Analysis", "fa_y"), inst("eab_t1-01", "EEGAgentBench", "eab_t1")]
    assert [i.case_id for i in catalog.select(items, ["check"])] == ["sa_x-01", "fa_y-02"]
    assert [i.case_id for i in catalog.select(items, ["CHECK", "fa_y-03"])] == ["sa_x-01", "fa_y-03", "fa_y-02"]
    assert [i.case_id for i in catalog.select(items, ["all"])] == [i.case_id for i in items[:4]]
    assert catalog.select(items, ["all"]) == catalog.select(items, [])
    assert [i.case_id for i in catalog.select(items, ["all", "eegagentbench"])] == [i.case_id for i in items]


def test_unknown_selector_is_named():
    with pytest.raises(UserError, match="nope"):
        catalog.select([inst("sa_x-01")], ["sa_x", "nope"])


def test_instance_set_hash_changes_with_ground_truth():
    a, b = inst("sa_x-01"), inst("sa_x-01")
    b.agent_input.instruction = "changed"
    assert catalog.instance_set_hash([a]) != catalog.instance_set_hash([b])
