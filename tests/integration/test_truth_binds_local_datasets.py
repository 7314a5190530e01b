"""A user binds the task library to a local copy of each public dataset, and derives
leak-resistant variants: `eegbench truth --dataset NAME --root PATH` and `truth --variants K`,
then the oracle plays what they made in the real sandbox."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.runner.benchmark.datasets import fixtures

pytestmark = pytest.mark.integration

DATASETS = ("hmc", "isruc", "eegmat", "sleepedfx", "eegmmidb", "ds002718")
SLEEP = ("hmc", "isruc", "sleepedfx")
SOURCE_NAMES = ("SN00", "Subject0", "S001R", "sub-00", "SC40", "ST70", "subgroup")
VARIANT_TASKS = ("fa_band_power_db", "pi_emg_eeg_hf_ratio")


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.json"))}


def _with_env(eegbench, **extra: str) -> None:
    runs = str(eegbench.runs_dir)
    eegbench.env = lambda: {**os.environ, "EEGBENCH_RUNS": runs, **extra}


def _oracle_scores_100(eegbench, cases: list[str], run: str) -> None:
    proc = eegbench("eval", "--model", "oracle", "--run", run, "--jobs", "2", "--set", ",".join(cases))
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = eegbench.results(run)
    assert sorted(r["case_id"] for r in results) == sorted(cases)
    wrong = [(r["case_id"], r["status"], r["score"]) for r in results if r["status"] != "solution" or r["score"] != 100]
    assert not wrong, wrong


def test_truth_binds_every_dataset_reproducibly_and_the_oracle_scores_100(eegbench, tmp_path):
    data, local = tmp_path / "data", tmp_path / "local"
    outputs = {}
    for dataset in DATASETS:
        root = getattr(fixtures, f"write_{dataset}")(tmp_path / "copies" / dataset)
        for target in (local, tmp_path / "again"):
            _with_env(eegbench, EEGBENCH_DATA=str(data), EEGBENCH_LOCAL_INSTANCES=str(target))
            proc = eegbench("truth", "--dataset", dataset, "--root", str(root), "--max-bindings", "1", "--no-cache")
            assert proc.returncode == 0, proc.stderr[-3000:]
        outputs[dataset] = proc.stdout + proc.stderr
        written = _files(local / dataset)
        assert written == _files(tmp_path / "again" / dataset)  # a second build is byte-identical
        library = [name for name in written if "/" in name]  # <task>/<case>.json (T6 files lie flat)
        assert len(library) >= 4, (dataset, sorted(written))
        tasks = {name.split("/")[0] for name in library}
        assert ({"sa_stage_percent", "sa_sleep_metrics"} <= tasks) is (dataset in SLEEP), (dataset, tasks)
    assert "no sleep hypnogram" in outputs["eegmat"]
    assert "2 EEG channel(s), the task needs 4" in " ".join(outputs["sleepedfx"].split())
    assert "no homologous left/right EEG channel pair" in " ".join(outputs["sleepedfx"].split())
    staged = [p.name for p in (data / "local").rglob("*") if p.is_file()]
    assert staged and not [n for n in staged if any(s in n for s in SOURCE_NAMES)], staged

    cases = sorted(json.loads(p.read_text())["meta_info"]["case_id"] for p in local.rglob("*.json"))
    for path in local.rglob("*/*/*.json"):
        instance = json.loads(path.read_text())
        assert instance["meta_info"]["original_dataset"].startswith("local copy of ")
        assert "{" not in instance["agent_input"]["instruction"]
    _with_env(eegbench, EEGBENCH_DATA=str(data), EEGBENCH_LOCAL_INSTANCES=str(local))
    proc = eegbench("instances", "--stats", *[a for t in ("fa_band_power_db", "sa_stage_percent") for a in ("--task", t)])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    _oracle_scores_100(eegbench, cases, "local")


def test_truth_variants_are_reproducible_and_the_oracle_scores_100_on_them(eegbench, tmp_path):
    local = tmp_path / "local"
    tasks = [a for t in VARIANT_TASKS for a in ("--task", t)]
    for target in (local, tmp_path / "again"):
        _with_env(eegbench, EEGBENCH_LOCAL_INSTANCES=str(target))
        proc = eegbench("truth", "--variants", "2", "--seed", "3", "--no-cache", *tasks)
        assert proc.returncode == 0, proc.stderr[-3000:]
    written = _files(local / "variants")
    assert written == _files(tmp_path / "again" / "variants")
    assert "cannot transform input spkit/EEG16SecData.pkl" in " ".join((proc.stdout + proc.stderr).split())  # refused, said why
    variants = [json.loads(text) for text in written.values()]
    done = {v["meta_info"]["variant"]["transform"] for v in variants}
    assert done >= {"permute_channels", "unit_change", "polarity", "noise", "shift_window"}, done
    originals = sorted({v["meta_info"]["variant_of"] for v in variants})
    _with_env(eegbench, EEGBENCH_LOCAL_INSTANCES=str(local))
    _oracle_scores_100(eegbench, originals + [v["meta_info"]["case_id"] for v in variants], "variants")
    proc = eegbench("report", "variants")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Original against variant scores" in proc.stdout and "shift_window" in proc.stdout
