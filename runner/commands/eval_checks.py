"""What `eval` checks before a run directory exists: the names it is given are registered, the
instances load and fit the model, their inputs and metrics are usable, the model specs parse
and the folders it writes are usable. `eval --dry-run` runs the same checks."""
from __future__ import annotations

import argparse
from pathlib import Path

from runner.benchmark import catalog
from runner.core.config import RunConfig
from runner.core.paths import Environment, check_writable
from runner.models.kinds import BadModelSpec, ModelSpec
from runner.paradigms import PARADIGMS
from runner.run.executors import EXECUTORS
from runner.run.records import split_key
from runner.sandbox import sandbox_choices
from validation.errors import UserError
from validation.instance import Instance
from validation.scoring import check_instance_metrics


def check_registered(config: RunConfig) -> None:
    """UserError naming the field when the config's paradigm, sandbox or executor is not a
    registered one (before anything of the run is made)."""
    for field, value, names in (("paradigm", config.paradigm, PARADIGMS.names()),
                                ("sandbox", config.sandbox, sandbox_choices()),
                                ("executor", config.executor, EXECUTORS.names())):
        if value not in names:
            raise UserError(f"run {config.run_id}: {field} {value!r} is not one of {', '.join(names)}")


def load_instances(config: RunConfig, env: Environment) -> list[Instance]:
    """The case files of --cases, else the built-in benchmark (and local instances)."""
    if config.cases_dir:
        return catalog.load_cases(Path(config.cases_dir))
    return catalog.load_all(env.paths.instances_dir, env.paths.local_instances)


def check_model_fits(config: RunConfig, instances: list[Instance]) -> None:
    """The oracle needs each instance's reference script (case files carry none)."""
    if config.model != "oracle":
        return
    lacking = [i.case_id for i in instances if i.reference is None]
    if lacking:
        raise UserError(f"MODEL=oracle needs each instance's reference script; {len(lacking)} case(s) "
                        f"have none (e.g. {lacking[0]}): official case files are run with a real or script: model")


def check_inputs(instances: list[Instance], root: Path, hint: str) -> None:
    """Every input file is under the data root; UserError names the first cases lacking one,
    and ends with `hint` (what to do about it)."""
    lacking = [(i.case_id, p) for i in instances for p in i.agent_input.input_paths() if not (root / p).is_file()]
    if not lacking:
        return
    shown = "; ".join(f"{case}: agent_input names {path}" for case, path in lacking[:5])
    more = f" (and {len(lacking) - 5} more)" if len(lacking) > 5 else ""
    raise UserError(f"input files missing under {root}: {shown}{more} ({hint})")


def check_runnable(instances: list[Instance], root: Path, hint: str) -> None:
    """What every run checks of its instances before anything starts: the input files are under
    `root` (`hint`: what to do when one is not), the metrics usable and the case ids apart from
    epoch directories; UserError says which."""
    check_inputs(instances, root, hint)
    check_metrics(instances)
    check_case_ids(instances)


def check_case_ids(instances: list[Instance]) -> None:
    """No case id reads as another case's later epoch (`x@2`): entry keys name directories."""
    clashing = [i.case_id for i in instances if split_key(i.case_id) != (i.case_id, 1)]
    if clashing:
        raise UserError(f"case ids ending in '@<number>' clash with epoch directories: {', '.join(clashing[:5])}")


def check_metrics(instances: list[Instance]) -> None:
    """Every metric's params are usable before the first instance starts."""
    problems = [p for i in instances for p in check_instance_metrics(i)]
    if problems:
        raise UserError("broken instances: " + "; ".join(problems[:5]))


def check_model_specs(args: argparse.Namespace, env: Environment, model: str) -> None:
    """Every model spec parses; the error names the option or variable the spec came from."""
    specs = [("--model" if args.model else "MODEL", model, "evaluated")]
    for option, role, given in (("--parser-model", "parser", args.parser_model), ("--judge", "judge", args.judge),
                                ("--vlm-judge", "vlm", args.vlm_judge)):
        variable = f"EEGBENCH_{role.upper()}_MODEL"
        source, spec = (option, given) if given else (variable, env.get(variable))
        if spec and spec != "none":
            specs.append((source, spec, "scoring"))
    for source, spec, kind in specs:
        try:
            ModelSpec.parse(spec, role="evaluated" if kind == "evaluated" else "scoring")
        except BadModelSpec as exc:
            raise UserError(f"{source}: {exc}") from None


def check_eval_paths(config: RunConfig, env: Environment) -> None:
    """The folders `eval` reads and writes are usable, checked before a run directory exists."""
    if config.data_root and not Path(config.data_root).is_dir():
        raise UserError(f"--data-root {config.data_root}: not a directory (the folder case files' data_path is relative to)")
    source = "EEGBENCH_RUNS" if env.get("EEGBENCH_RUNS") else "the runs directory"
    check_writable(env.paths.runs_dir, source, "EEGBENCH_RUNS")

