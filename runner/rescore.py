"""`eegbench score RUN`: re-score a finished run from its saved reports and artifacts, and
`eegbench audit-parser RUN`: how often the LLM parser and the rules parser agree.

Neither calls the evaluated model. Re-scoring goes through the same Scorer as the run, so
with the run's own settings (the default) it reproduces the run's scores exactly; judge
and parser replies come from the scoring cache when the same request was made before.
Results go to runs/<run>/scores/<name>.jsonl and instances/<case>/scores/<name>.json; the
run's own score.json and results.jsonl are never touched.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from pydantic import BaseModel
from rich.table import Table

from runner import catalog
from runner.config import RunConfig
from runner.fileio import write_atomic, write_json
from runner.run.store import RunStore
from runner.scoring.endpoints import resolve
from runner.scoring.scorer import CACHE_DIR, ScoringSettings, build_scorer
from validation.instance import Instance, load_instance
from validation.llm_parser import llm_parse
from validation.parser import parse_report
from validation.units import canonical


class Rescored(BaseModel):
    case_id: str
    bench_subset: str
    original: float | None
    score: float | None
    unscored: list[str]
    violations: int


def saved_instances(store: RunStore, project_root: Path) -> list[tuple[Instance, Path]]:
    """(instance, audit dir) of every finished, scored instance of the run."""
    config = RunConfig.model_validate(store.read_run()["config"])
    fallback: dict[str, Instance] | None = None
    found = []
    for record in sorted(store.finished().values(), key=lambda r: r.case_id):
        audit = store.instance_dir(record.case_id)
        saved = audit / "instance.json"
        if saved.is_file():
            found.append((load_instance(saved), audit))
            continue
        if fallback is None:  # runs made before instance.json was kept
            source = catalog.load_cases(Path(config.cases_dir)) if config.cases_dir else catalog.load_all(project_root / "instances")
            fallback = {i.case_id: i for i in source}
        if record.case_id not in fallback:
            raise FileNotFoundError(f"{record.case_id}: no instance.json in {audit} and not in the catalog")
        found.append((fallback[record.case_id], audit))
    return found


def settings_for(store: RunStore, overrides: dict) -> ScoringSettings:
    recorded = RunConfig.model_validate(store.read_run()["config"]).scoring
    given = {k: v for k, v in overrides.items() if v is not None}
    return recorded.model_copy(update=given)


def rescore(store: RunStore, settings: ScoringSettings, name: str, project_root: Path,
            progress=None) -> list[Rescored]:
    config = RunConfig.model_validate(store.read_run()["config"])
    scorer = build_scorer(settings, evaluated=config.model, project_root=project_root)
    rows: list[Rescored] = []
    try:
        items = saved_instances(store, project_root)
        task = progress.add_task(f"score {store.run_id}", total=len(items)) if progress else None
        for instance, audit in items:
            report = (audit / "report.md").read_text() if (audit / "report.md").exists() else ""
            manifest = json.loads((audit / "artifacts.json").read_text()) if (audit / "artifacts.json").exists() else []
            score = scorer.score(instance, report, audit / "artifacts", manifest)
            write_json(audit / "scores" / f"{name}.json", {"settings": scorer.describe(), **score.model_dump(mode="json")})
            original = json.loads((audit / "score.json").read_text()).get("score") if (audit / "score.json").exists() else None
            rows.append(Rescored(case_id=instance.case_id, bench_subset=instance.meta_info.bench_subset,
                                 original=original, score=score.score, unscored=score.unscored,
                                 violations=len(score.violations)))
            if progress:
                progress.advance(task)
        lines = "".join(r.model_dump_json() + "\n" for r in rows)
        write_atomic(store.root / "scores" / f"{name}.jsonl", lines)
        write_json(store.root / "scores" / f"{name}.settings.json", scorer.describe())
    finally:
        scorer.close()
    return rows


def rescore_table(rows: list[Rescored], name: str) -> Table:
    table = Table(title=f"re-score {name}: {len(rows)} instances")
    for column in ("group", "instances", "mean (run)", "mean (re-score)", "changed", "unscored units"):
        table.add_column(column)
    groups: dict[str, list[Rescored]] = {"all": rows}
    for r in rows:
        groups.setdefault(r.bench_subset, []).append(r)
    for group, items in groups.items():
        table.add_row(group, str(len(items)), _mean([r.original for r in items]), _mean([r.score for r in items]),
                      str(sum(r.original != r.score for r in items)), str(sum(len(r.unscored) for r in items)))
    return table


def _mean(values: list[float | None]) -> str:
    scored = [v for v in values if v is not None]
    return f"{math.fsum(scored) / len(scored):.2f}" if scored else "-"


# --- audit-parser -----------------------------------------------------------------------

class FieldAgreement(BaseModel):
    case_id: str
    bench_subset: str
    key: str
    rules: object = None
    llm: object = None
    agree: bool


def audit_parser(store: RunStore, parser_model: str | None, project_root: Path, progress=None) -> list[FieldAgreement]:
    """Compare LLM-parsed and rule-parsed fields wherever both parsers found a value."""
    config = RunConfig.model_validate(store.read_run()["config"])
    endpoint = resolve("parser", parser_model, evaluated=config.model, project_root=project_root,
                       cache_dir=project_root / CACHE_DIR)
    if endpoint is None:
        raise ValueError("audit-parser needs a parser model: --parser-model or EEGBENCH_PARSER_MODEL")
    rows: list[FieldAgreement] = []
    try:
        items = saved_instances(store, project_root)
        task = progress.add_task(f"audit {store.run_id}", total=len(items)) if progress else None
        for instance, audit in items:
            report = (audit / "report.md").read_text() if (audit / "report.md").exists() else ""
            keys = instance.eval_config.target_keys()
            if report.strip() and keys:
                rules = parse_report(report, keys).fields
                llm = llm_parse(endpoint.chat, endpoint.model, report, instance.eval_config.parser_prompt, keys).fields
                rows += [FieldAgreement(case_id=instance.case_id, bench_subset=instance.meta_info.bench_subset,
                                        key=k, rules=rules[k], llm=llm[k], agree=same_value(rules[k], llm[k]))
                         for k in keys if rules.get(k) is not None and llm.get(k) is not None]
            if progress:
                progress.advance(task)
    finally:
        endpoint.close()
    write_json(store.root / "audit-parser.json", {"parser_model": endpoint.describe(),
                                                  "fields": [r.model_dump(mode="json") for r in rows]})
    return rows


def same_value(a: object, b: object) -> bool:
    """Equal after BrainBench canonicalisation, element by element for lists."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) or isinstance(b, dict) or isinstance(a, list) or isinstance(b, list):
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    return canonical(a) == canonical(b)


def audit_table(rows: list[FieldAgreement]) -> Table:
    table = Table(title="parser agreement (fields both parsers filled)")
    for column in ("group", "fields", "agree", "agreement %"):
        table.add_column(column)
    groups: dict[str, list[FieldAgreement]] = {"all": rows}
    for r in rows:
        groups.setdefault(r.bench_subset, []).append(r)
    for group, items in groups.items():
        agree = sum(r.agree for r in items)
        table.add_row(group, str(len(items)), str(agree), f"{100 * agree / len(items):.1f}" if items else "-")
    return table
