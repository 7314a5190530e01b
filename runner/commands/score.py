"""`eegbench score RUN`: re-score a finished run from its saved reports and artifacts, and
`eegbench audit-parser RUN`: how often the LLM parser and the rules parser agree.

Neither calls the evaluated model. Re-scoring goes through the same Scorer as the run, so
with the run's own settings (the default) it reproduces the run's scores exactly; judge
and parser replies come from the scoring cache when the same request was made before.
Both iterate over the run's entries, one per (case, epoch) of a run made with --epochs.
Results go to runs/<run>/scores/<name>.jsonl and instances/<key>/scores/<name>.json; the
run's own score.json and results.jsonl are never touched. Both carry the parser and judges'
usage per role (tokens, wall time), and scores/<name>.settings.json names the parser mode,
parser model and judges that produced every row.
"""
from __future__ import annotations

import argparse
import json
import math

from pydantic import BaseModel, Field
from rich.progress import Progress
from rich.table import Table

from runner.commands.output import console
from runner.core.config import check_run_id
from runner.core.paths import Environment
from runner.core.settings import ScoringSettings
from runner.models.endpoint import Endpoint
from runner.run.records import split_key
from runner.run.store import RunStore
from runner.scoring.endpoints import resolve
from runner.scoring.scorer import Scorer, build_scorer, cache_dir
from validation.errors import UserError
from validation.instance import Instance
from validation.llm_parser import llm_parse
from validation.parser import parse_report
from validation.scoring import RoleUsage
from validation.units import canonical


class Rescored(BaseModel):
    """One re-scored entry (an instance's epoch) beside its original score."""

    case_id: str
    epoch: int = 1
    bench_subset: str
    original: float | None
    score: float | None
    unscored: list[str]
    violations: int
    parse_method: str = ""  # how this row's report was parsed (rules: json/lines/none; llm; rules+llm; unparsed)
    usage: dict[str, RoleUsage] = Field(default_factory=dict)  # the re-score's parser and judge cost, per role


def saved_entries(store: RunStore) -> list[tuple[str, Instance]]:
    """(entry key, saved instance) of every finished entry of the run, by case id then epoch."""
    return [(key, store.saved_instance(key)) for key in sorted(store.entries(), key=split_key)]


def settings_for(store: RunStore, overrides: dict[str, str | None]) -> ScoringSettings:
    """The run's own scoring settings, with the options given on the command line."""
    given = {k: v for k, v in overrides.items() if v is not None}
    return store.config().scoring.model_copy(update=given)


def rescore(store: RunStore, settings: ScoringSettings, name: str, env: Environment,
            progress: Progress | None = None) -> list[Rescored]:
    """Score every finished instance again from its saved report and artifacts."""
    scorer = build_scorer(settings, evaluated=store.config().model, env=env)
    rows: list[Rescored] = []
    try:
        entries = saved_entries(store)
        task = progress.add_task(f"score {store.run_id}", total=len(entries)) if progress else None
        for key, instance in entries:
            rows.append(_rescore_one(store, scorer, key, instance, name))
            if progress is not None and task is not None:
                progress.advance(task)
        store.write_scores(name, list(rows), scorer.describe())
    finally:
        scorer.close()
    return rows


def _rescore_one(store: RunStore, scorer: Scorer, key: str, instance: Instance, name: str) -> Rescored:
    manifest = [a.as_manifest() for a in store.read_artifacts(key)]
    score = scorer.score(instance, store.read_report(key), store.artifacts_dir(key), manifest)
    store.write_case_score(key, name, {"settings": scorer.describe(), **score.model_dump(mode="json")})
    original = store.read_score(key)
    return Rescored(case_id=instance.case_id, epoch=split_key(key)[1], bench_subset=instance.meta_info.bench_subset,
                    original=original.score if original is not None else None, score=score.score,
                    unscored=score.unscored, violations=len(score.violations),
                    parse_method=score.parse_method, usage=score.usage)


def rescore_table(rows: list[Rescored], name: str) -> Table:
    """Entries (instance epochs), mean before and after, how many changed, per subset."""
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
    """One field both parsers filled, and whether they agree."""

    case_id: str
    epoch: int = 1
    bench_subset: str
    key: str
    rules: object = None
    llm: object = None
    agree: bool


def audit_parser(store: RunStore, parser_model: str | None, env: Environment,
                 progress: Progress | None = None) -> list[FieldAgreement]:
    """Compare LLM-parsed and rule-parsed fields wherever both parsers found a value."""
    endpoint = resolve("parser", parser_model, evaluated=store.config().model, env=env, cache_dir=cache_dir(env))
    if endpoint is None:
        raise UserError("audit-parser needs a parser model: --parser-model or EEGBENCH_PARSER_MODEL")
    rows: list[FieldAgreement] = []
    try:
        entries = saved_entries(store)
        task = progress.add_task(f"audit {store.run_id}", total=len(entries)) if progress else None
        for key, instance in entries:
            rows += _agreement(instance, split_key(key)[1], store.read_report(key), endpoint)
            if progress is not None and task is not None:
                progress.advance(task)
    finally:
        endpoint.close()
    store.write_audit("audit-parser", {"parser_model": endpoint.describe(),
                                       "fields": [r.model_dump(mode="json") for r in rows]})
    return rows


def _agreement(instance: Instance, epoch: int, report: str, endpoint: Endpoint) -> list[FieldAgreement]:
    keys = instance.eval_config.target_keys()
    if not report.strip() or not keys:
        return []
    rules = parse_report(report, keys).fields
    llm = llm_parse(endpoint.chat, endpoint.model, report, instance.eval_config.parser_prompt, keys).fields
    return [FieldAgreement(case_id=instance.case_id, epoch=epoch, bench_subset=instance.meta_info.bench_subset,
                           key=k, rules=rules[k], llm=llm[k], agree=same_value(rules[k], llm[k]))
            for k in keys if rules.get(k) is not None and llm.get(k) is not None]


def same_value(a: object, b: object) -> bool:
    """Equal after BrainBench canonicalisation, element by element for lists."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) or isinstance(b, dict) or isinstance(a, list) or isinstance(b, list):
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    return canonical(a) == canonical(b)


def audit_table(rows: list[FieldAgreement]) -> Table:
    """Fields compared and agreement, overall and per subset."""
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


def cmd_score(args: argparse.Namespace, env: Environment) -> int:
    """Re-score a run from its saved reports and artifacts."""
    from runner.commands.logs import output_console
    from runner.commands.score import rescore, rescore_table, settings_for
    from runner.core.fileio import progress_bar
    from runner.run.store import open_run

    store = open_run(args.run, env.paths.runs_dir)
    settings = settings_for(store, {"parser": args.parser, "parser_model": args.parser_model,
                                    "judge": args.judge, "vlm_judge": args.vlm_judge})
    with progress_bar(console.is_terminal) as bar:
        rows = rescore(store, settings, check_run_id(args.name), env, progress=bar)
    output_console().print(rescore_table(rows, args.name))
    console.print(f"written: {store.root / 'scores' / (args.name + '.jsonl')}")
    return 0


def cmd_audit_parser(args: argparse.Namespace, env: Environment) -> int:
    """How often the LLM parser and the rules parser agree on a run's reports."""
    from runner.commands.logs import output_console
    from runner.commands.score import audit_parser, audit_table
    from runner.core.fileio import progress_bar
    from runner.run.store import open_run

    store = open_run(args.run, env.paths.runs_dir)
    with progress_bar(console.is_terminal) as bar:
        rows = audit_parser(store, args.parser_model, env, progress=bar)
    output_console().print(audit_table(rows))
    for row in [r for r in rows if not r.agree][:20]:
        console.print(f"{row.case_id} {row.key}: rules {row.rules!r} vs llm {row.llm!r}")
    return 0
