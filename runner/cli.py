"""The `eegbench` command: parses the arguments (runner/commands/parser.py) and routes each verb
to its module in runner/commands/.

The environment (paths and variables) is read once here and passed down. Only eegbench's own
errors are caught (`EegbenchError`): a user error exits 2, an infrastructure error 3, an
interrupted run 130; any other exception is a bug and shows its traceback.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from rich.markup import escape

from extensions.registry import UnknownName
from runner.commands.doctor import cmd_doctor, cmd_jit_cache
from runner.commands.evaluate import cmd_eval
from runner.commands.instances import cmd_instances
from runner.commands.logs import cmd_logs, cmd_show, cmd_verify
from runner.commands.output import console
from runner.commands.parser import build_parser
from runner.commands.plans import cmd_plans
from runner.commands.report import cmd_compare, cmd_export, cmd_report
from runner.commands.score import cmd_audit_parser, cmd_score
from runner.commands.truth import cmd_data, cmd_truth
from runner.core import log
from runner.core.paths import Environment
from runner.run import orphans
from validation.errors import EegbenchError, InfrastructureError, UserError

EXIT_USER_ERROR = 2
EXIT_INFRASTRUCTURE = 3


COMMANDS: dict[str, Callable[[argparse.Namespace, Environment], int]] = {
    "eval": cmd_eval, "truth": cmd_truth, "data": cmd_data, "doctor": cmd_doctor, "jit-cache": cmd_jit_cache,
    "instances": cmd_instances, "plans": cmd_plans, "verify": cmd_verify, "logs": cmd_logs, "show": cmd_show,
    "score": cmd_score, "audit-parser": cmd_audit_parser, "report": cmd_report, "compare": cmd_compare,
    "export": cmd_export,
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `eegbench` console script."""
    args = build_parser().parse_args(argv)
    log.configure(console, verbose=args.verbose)
    orphans.mark_controller()
    try:
        return COMMANDS[args.command](args, Environment.from_os())
    except (UserError, UnknownName) as exc:  # an unknown extension name is wrong input too
        console.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)  # one line: paths stay whole
        return EXIT_USER_ERROR
    except (InfrastructureError, EegbenchError) as exc:
        console.print(f"[red]infrastructure error:[/red] {escape(str(exc))}")
        return EXIT_INFRASTRUCTURE


if __name__ == "__main__":
    sys.exit(main())
