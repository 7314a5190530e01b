"""`eegbench plans check`: every selected instance's BrainAgent tool plan must score full marks."""
from __future__ import annotations

import argparse

from rich.markup import escape

from runner.benchmark import catalog
from runner.commands.output import console
from runner.core.paths import Environment
from validation.errors import UserError


def cmd_plans(args: argparse.Namespace, env: Environment) -> int:
    """Check tool plans: each selected instance's plan, run in-process, must score full marks."""
    import json

    from runner.commands.instances import filter_instances
    from runner.core.fileio import progress_bar
    from runner.paradigms.brainagent.check import check_instance

    loaded = catalog.load_all(env.paths.instances_dir, env.paths.local_instances)
    chosen = [i for i in filter_instances(loaded, args.subset, args.task, None) if not args.case or i.case_id in args.case]
    chosen = [i for i in chosen if i.meta_info.bench_subset != "EEGAgentBench"]
    if not chosen:
        raise UserError("plans check: no instance matches the selection")
    failures = 0
    with progress_bar(console.is_terminal) as bar:
        task = bar.add_task("plans", total=len(chosen)) if bar else None
        for instance in chosen:
            check = check_instance(env.paths.project_root, instance, env.paths.data_root)
            if bar is not None and task is not None:
                bar.advance(task)
            mark = "[green]ok[/green]" if check.passed else "[red]FAIL[/red]"
            detail = check.error or (f"failed {check.failed_metrics}" if check.failed_metrics else "")
            unscored = f" unscored {check.unscored}" if check.unscored else ""
            console.print(f"{mark} {instance.case_id} score={check.score} {check.seconds:.1f}s {escape(detail)}{unscored}")
            if args.show_report and check.report is not None:
                console.print(escape(json.dumps(check.report, ensure_ascii=False)))
            failures += not check.passed
    console.print(f"{len(chosen) - failures}/{len(chosen)} instances reproduce the ground truth")
    return 1 if failures else 0
