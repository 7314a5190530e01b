"""`eegbench report`, `compare` and `export`: the verbs over finished runs (runner/report/)."""
from __future__ import annotations

import argparse
from pathlib import Path

from runner.commands.output import console
from runner.core.paths import Environment
from runner.report import command as report_command
from validation.errors import UserError


def cmd_report(args: argparse.Namespace, env: Environment) -> int:
    """Tables, statistics and figures from one or many runs."""
    from runner.commands.logs import output_console

    return report_command.cmd_report(args, env, console, output_console())


def cmd_compare(args: argparse.Namespace, env: Environment) -> int:
    """A paired comparison of two runs."""
    from runner.commands.logs import output_console

    return report_command.cmd_compare(args, env, console, output_console())


def cmd_export(args: argparse.Namespace, env: Environment) -> int:
    """Write a run as an Inspect AI eval log (inspect-ai is an optional extra)."""
    from runner.run.store import open_run

    store = open_run(args.run, env.paths.runs_dir)
    try:
        from runner.report import inspect_log
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "inspect_ai":
            raise
        raise UserError("export --format inspect needs inspect-ai: pip install -e '.[inspect]'") from None
    out = Path(args.out) if args.out else inspect_log.default_path(store)
    log = inspect_log.export_run(store, out)
    console.print(f"wrote {out} ({len(log.samples or [])} samples); browse it: inspect view --log-dir {out.parent}")
    return 0
