"""build_local: fixtures in native layout -> staged inputs + instance files the oracle answer
scores 100 on (scored here without a sandbox; the eval path is in tests/integration)."""
import json

import pytest

from extensions.registry import UnknownName
from runner.benchmark.agentbench.local import build_local
from runner.core.paths import PROJECT_ROOT
from tests.fixtures import datasets as fx
from validation.errors import UserError
from validation.instance import load_instance
from validation.scoring import score_instance

MAKERS = {"bonn": fx.make_bonn, "ds004504": fx.make_ds004504, "chbmit": fx.make_chbmit,
          "sleepedfx": fx.make_sleepedfx}


@pytest.mark.parametrize("dataset", sorted(MAKERS))
def test_build_local_writes_scorable_instances(dataset, tmp_path):
    root = MAKERS[dataset](tmp_path / "copy" / dataset)
    data_root, out = tmp_path / "data", tmp_path / "instances"
    written = build_local(dataset, root, PROJECT_ROOT, data_root, out)
    assert written and all(p.parent == out / dataset for p in written)
    for path in written:
        instance = load_instance(path)
        assert instance.meta_info.bench_subset == "EEGAgentBench"
        answer = instance.reference.params["answer"]
        report = "```json\n" + json.dumps({"answer": answer}) + "\n```"
        assert score_instance(instance, report).score == 100.0, instance.case_id
        assert score_instance(instance, "").score == 0.0, instance.case_id
        for rel, sha in instance.reference.inputs.items():
            staged = data_root / rel
            assert staged.is_file() and not staged.is_symlink(), rel  # symlinks leak the source path
            assert rel.startswith(f"local/{dataset}/")
            label = json.dumps(answer)
            assert instance.case_id.split("-")[1] in rel and label not in rel
    again = build_local(dataset, root, PROJECT_ROOT, data_root, out)
    assert [p.read_text() for p in again] == [p.read_text() for p in written]


def test_stale_instances_of_the_dataset_are_removed(tmp_path):
    root = fx.make_bonn(tmp_path / "bonn")
    out = tmp_path / "instances"
    (out / "bonn").mkdir(parents=True)
    (out / "bonn" / "eab_t3_bonn-old.json").write_text("{}")
    build_local("bonn", root, PROJECT_ROOT, tmp_path / "data", out)
    assert not (out / "bonn" / "eab_t3_bonn-old.json").exists()


def test_unknown_dataset_and_missing_root_are_named(tmp_path):
    with pytest.raises(UnknownName, match="unknown dataset 'tuh'"):
        build_local("tuh", tmp_path, PROJECT_ROOT, tmp_path, tmp_path)
    with pytest.raises(UserError, match="nowhere"):
        build_local("bonn", tmp_path / "nowhere", PROJECT_ROOT, tmp_path, tmp_path)
