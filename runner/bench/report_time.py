"""`make bench`, the report's part: how long `eegbench report --html` takes over two runs of
every instance of the catalog, the size the reporting layer is built for (goal: under 30 s).

The two runs are written straight through RunStore, without a sandbox or a model: each
instance's one turn states the reference answer (run B's turn misses the tasks of every other
subset), and the real scorer scores it, so score.json, transcripts and results are what an
oracle run writes. What is timed is what `report` does: loading, statistics, figures, HTML.
"""
from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from runner.benchmark import catalog
from runner.core.config import RunConfig
from runner.core.paths import Environment
from runner.core.settings import ScoringSettings
from runner.core.transcript import Turn
from runner.models.oracle import reference_answer
from runner.report.build import build_report, load_runs
from runner.report.context import Settings
from runner.report.figures import all_figures
from runner.report.html import render_html
from runner.run.records import ResultRecord, TranscriptRecord
from runner.run.store import RunStore
from runner.scoring.scorer import build_scorer
from validation.instance import Instance


def _write_run(store: RunStore, paradigm: str, instances: list[Instance], wrong_subsets: set[str],
               env: Environment) -> None:
    store.open(RunConfig(run_id=store.run_id, model="oracle", paradigm=paradigm), {"instance_set_hash": "bench"})
    scorer = build_scorer(ScoringSettings(parser="rules"), evaluated=None, env=env)
    for instance in instances:
        answer: Any = reference_answer(instance)
        if instance.meta_info.bench_subset in wrong_subsets:
            answer = {"answer": "wrong"}
        report = "```json\n" + json.dumps(answer, sort_keys=True) + "\n```"
        store.begin_instance(instance.case_id, paradigm)
        turn = Turn(index=0, reply=f"<solution>\n{report}\n</solution>", latency_s=0.5, action="solution")
        score = scorer.score(instance, report, None, [])
        transcript = TranscriptRecord(case_id=instance.case_id, status="solution", paradigm=paradigm,
                                      started_at=time.time(), turns=[turn])
        store.write_instance(instance.case_id, instance, transcript, report, [], score)
        store.append_result(ResultRecord(
            case_id=instance.case_id, task_id=instance.task_id, bench_subset=instance.meta_info.bench_subset,
            difficulty=instance.meta_info.difficulty, status="solution", score=score.score, rounds=1,
            prompt_tokens=0, completion_tokens=0, duration_s=0.5, unscored=score.unscored))
    scorer.close()


def report_build_time(env: Environment) -> dict[str, float]:
    """Seconds to load, compute, draw and render the report of two full-catalog runs."""
    instances = [i for i in catalog.load_all() if i.meta_info.bench_subset != "EEGAgentBench"]
    subsets = sorted({i.meta_info.bench_subset for i in instances})
    with tempfile.TemporaryDirectory(prefix="eegbench-bench-report-") as scratch:
        runs_dir = Path(scratch)
        _write_run(RunStore(runs_dir / "a"), "codeact", instances, set(), env)
        _write_run(RunStore(runs_dir / "b"), "hybrid", instances, set(subsets[::2]), env)
        began = time.perf_counter()
        runs = load_runs(["a", "b"], runs_dir)
        loaded = time.perf_counter()
        report = build_report(runs, Settings())
        computed = time.perf_counter()
        for figure in all_figures(report, runs):
            report.add(figure)
        drawn = time.perf_counter()
        page = render_html(report, runs)
        rendered = time.perf_counter()
    return {
        "instances_per_run": float(len(instances)),
        "load_s": loaded - began,
        "statistics_s": computed - loaded,
        "figures_s": drawn - computed,
        "html_s": rendered - drawn,
        "total_s": rendered - began,
        "html_mb": len(page.encode("utf-8")) / 1e6,
    }
