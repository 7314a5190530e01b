"""Which runs may be ranked together, and on which cases.

Runs are comparable when they share the instance set (its hash), the parser and judges, the
interaction controls and the sandbox backend, and hold the same cases. Runs that differ are
never ranked together silently: without `--intersect` the report refuses and says what
differs; with it, every run is restricted to the cases all of them hold and the report opens
with what differs.
"""
from __future__ import annotations

import json
from collections.abc import Callable

from runner.report.rows import RunData, RunInfo
from validation.errors import UserError


class NotComparable(UserError, ValueError):
    """The runs differ in what makes scores comparable, and --intersect was not given."""


def _parser(info: RunInfo) -> str:
    return info.parser if info.parser_model is None else f"{info.parser} ({info.parser_model})"


# What must agree, and how each run's value is read.
COMPARED: dict[str, Callable[[RunInfo], str]] = {
    "instance set": lambda info: str(info.instance_set_hash),
    "parser": _parser,
    "judge": lambda info: str(info.judge),
    "VLM judge": lambda info: str(info.vlm_judge),
    "controls": lambda info: json.dumps(info.controls, sort_keys=True),
    "sandbox": lambda info: info.sandbox,
}


def differences(runs: list[RunData]) -> list[str]:
    """One line per compared setting the runs disagree on, naming each run's value."""
    lines = []
    for name, read in COMPARED.items():
        values = {run.run_id: read(run.info) for run in runs}
        if len(set(values.values())) > 1:
            shown = "; ".join(f"{run_id}: {_short(value)}" for run_id, value in values.items())
            lines.append(f"{name} differs ({shown})")
    return lines


def _short(value: str) -> str:
    return value if len(value) <= 80 else value[:77] + "..."


def comparable(runs: list[RunData], intersect: bool) -> tuple[list[RunData], list[str]]:
    """The runs to report (restricted to shared cases under --intersect) and the warnings
    the report opens with. Raises NotComparable when they differ and intersect is off."""
    warnings = [_self_parsed(run) for run in runs if run.info.self_parsed]
    if len(runs) < 2:
        return runs, warnings
    problems = differences(runs)
    cases = [{row.case_id for row in run.rows} for run in runs]
    shared = set.intersection(*cases)
    if any(c != shared for c in cases):
        sizes = ", ".join(f"{run.run_id}: {len(c)}" for run, c in zip(runs, cases))
        problems.append(f"the runs hold different cases ({sizes}; {len(shared)} shared)")
    if not problems:
        return runs, warnings
    if not intersect:
        raise NotComparable("these runs cannot be ranked together: " + "; ".join(problems)
                            + ". Rerun with --intersect to rank them on the cases they share, "
                            "or re-score them under one parser (eegbench score RUN --parser-model X --name N; "
                            "report --scores N)")
    if not shared:
        raise NotComparable("the runs share no case: " + "; ".join(problems))
    restricted = [_restrict(run, shared) for run in runs]
    note = f"--intersect: every run is restricted to the {len(shared)} cases all runs hold"
    return restricted, [*problems, note, *warnings]


def _restrict(run: RunData, cases: set[str]) -> RunData:
    return RunData(info=run.info, rows=[r for r in run.rows if r.case_id in cases], store=run.store)


def _self_parsed(run: RunData) -> str:
    return (f"run {run.run_id}: the evaluated model's own endpoint parsed its reports ({run.info.parser_model}); "
            "to compare models fairly re-score under one common parser: eegbench score RUN --parser llm "
            "--parser-model X --name common, then eegbench report ... --scores common")
