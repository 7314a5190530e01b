"""`instances --export brainbench`: the folders, file names and fields BrainBench's runner reads."""
import json

import pytest

from runner.benchmark import catalog
from runner.benchmark.brainbench_layout import INDEX, case_file, export
from runner.core.paths import Environment
from validation.errors import UserError
from validation.instance import MetaInfo, load_instance

ENV = Environment.from_os()


def chosen():
    return catalog.select(catalog.load_all(ENV.paths.instances_dir), ["fa_alpha_relpower", "sa_hypnogram_export"])


def test_one_folder_per_task_with_numbered_case_files(tmp_path):
    instances = chosen()
    index = export(instances, tmp_path / "bb", ENV.paths.data_root, ENV.paths.data_root)
    tasks = sorted({i.task_id for i in instances}, key=lambda t: (t.startswith("sa_"), t))
    assert [index["folders"][f]["task_id"] for f in ("case1", "case2")] == tasks
    for folder, entry in index["folders"].items():
        files = sorted(p.name for p in (tmp_path / "bb" / folder).iterdir())
        assert files == [f"{folder}_{n:02d}.json" for n in range(1, len(files) + 1)]
        assert sorted(entry["cases"].values()) == sorted(i.case_id for i in instances if i.task_id == entry["task_id"])
    rows = [line.split("\t") for line in (tmp_path / "bb" / INDEX).read_text().splitlines()]
    assert rows[0] == ["file", "task_id", "bench_subset", "case_id"]
    assert {r[0]: r[3] for r in rows[1:]} == {f"{f}/{n}": c for f, e in index["folders"].items() for n, c in e["cases"].items()}


def test_every_field_the_runner_reads_is_there(tmp_path):
    export(chosen(), tmp_path / "bb", ENV.paths.data_root, ENV.paths.data_root)
    files = sorted((tmp_path / "bb").glob("case*/case*_*.json"))
    assert len(files) == len(chosen())
    for path in files:
        data = json.loads(path.read_text())
        meta = data["meta_info"]
        assert meta["difficult"] == {"easy": 1, "medium": 2, "hard": 3}[meta["difficulty"]]
        for metric in data["eval_config"]["metrics"]:
            assert "ground_truth" not in metric["params"]
            assert "gt_value" in metric["params"] or metric["target_key"] == "full_text"
        for rel in [data["agent_input"]["data_path"]] if isinstance(data["agent_input"]["data_path"], str) \
                else data["agent_input"]["data_path"]:
            assert not rel.startswith("/") and (ENV.paths.data_root / rel).is_file()
        assert load_instance(path).case_id == meta["case_id"]  # and eegbench reads it back


def test_data_paths_are_rewritten_relative_to_the_root_given(tmp_path):
    (instance,) = catalog.select(chosen(), ["fa_alpha_relpower-01"])
    moved = json.loads(case_file(instance, ENV.paths.data_root, ENV.paths.data_root.parent))
    original = instance.agent_input.data_path
    first = original if isinstance(original, str) else original[0]
    got = moved["agent_input"]["data_path"]
    assert (got if isinstance(got, str) else got[0]) == f"{ENV.paths.data_root.name}/{first}"
    with pytest.raises(UserError, match="fa_alpha_relpower-01: agent_input.data_path .* not under --data-root"):
        case_file(instance, ENV.paths.data_root, tmp_path)


def test_an_older_file_is_exported_with_gt_value_and_a_numeric_difficult(tmp_path):
    (instance,) = catalog.select(chosen(), ["fa_alpha_relpower-01"])
    old = instance.model_copy(deep=True)
    old.meta_info.difficult = "easy"
    params = old.eval_config.metrics[0].params
    params["ground_truth"] = params.pop("gt_value")
    data = json.loads(case_file(old, ENV.paths.data_root, ENV.paths.data_root))
    assert data["meta_info"]["difficult"] == 1
    assert data["eval_config"]["metrics"][0]["params"]["gt_value"] == instance.eval_config.metrics[0].params["gt_value"]


def test_export_refuses_a_folder_that_holds_something(tmp_path):
    (tmp_path / "bb").mkdir()
    (tmp_path / "bb" / "mine.txt").write_text("keep")
    with pytest.raises(UserError, match="not an empty directory"):
        export(chosen(), tmp_path / "bb", ENV.paths.data_root, ENV.paths.data_root)


@pytest.mark.parametrize("difficult, level", [(1, "easy"), (2.0, "medium"), (3, "hard"), ("hard", "hard"),
                                              (1.5, None), (0, None), (None, None)])
def test_official_numbers_map_back_to_levels(difficult, level):
    assert MetaInfo(case_id="c", bench_subset="Sleep Assessment", difficult=difficult).difficulty == level
