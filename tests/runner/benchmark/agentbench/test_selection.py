from runner.benchmark import catalog
from validation.instance import AGENTBENCH_SUBSET, load_instance


def test_default_set_excludes_eegagentbench_and_set_selects_it():
    instances = catalog.load_all()
    default = catalog.select(instances, [])
    assert default and all(i.meta_info.bench_subset != AGENTBENCH_SUBSET for i in default)
    chosen = catalog.select(instances, ["eegagentbench"])
    assert chosen and all(i.meta_info.bench_subset == AGENTBENCH_SUBSET for i in chosen)
    assert {i.task_id for i in chosen} >= {"eab_t1_knowledge_qa", "eab_t2_artifact"}
    assert len(default) + len(chosen) == len(instances)


def test_local_instances_dir_is_loaded_too(tmp_path):
    source = next(p for p in catalog.instance_files() if "eegagentbench" in p.parts)
    (tmp_path / "bonn").mkdir()
    text = source.read_text().replace('"case_id": "', '"case_id": "zz_local_')
    (tmp_path / "bonn" / "x.json").write_text(text)
    assert any(i.case_id.startswith("zz_local_") for i in catalog.load_all(local_dir=tmp_path))
    assert not any(i.case_id.startswith("zz_local_") for i in catalog.load_all())


def test_eegagentbench_manifest_describes_the_committed_instances():
    path = catalog.INSTANCES_DIR / "manifests" / "eegagentbench.json"
    folder = catalog.INSTANCES_DIR / "eegagentbench"  # committed ones; instances/local/ is not
    committed = [load_instance(p) for p in sorted(folder.glob("*.json"))]
    assert path.read_text() == catalog.manifest_text(catalog.subset_manifest(AGENTBENCH_SUBSET, committed))
