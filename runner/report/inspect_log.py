"""A finished run as an Inspect AI eval log, so `inspect view` can browse its transcripts.

Everything is read through RunStore and written with inspect-ai's own log classes and
writer (an optional extra: `pip install -e '.[inspect]'`; only this module imports it, and
`eegbench export` imports this module only when asked to export).

The mapping:

- The log: task "eegbench", model = the run's model as eegbench names it (`oracle`,
  `openai:NAME`, ...), run_id = the eegbench run's name, solver = the paradigm. task_args =
  the run's settings (paradigm, selection, sandbox, controls, resources, scoring, ...: run.json's
  config without the model and its generation settings, which go to model_generate_config and
  model_base_url). The dataset is named after the instance-set hash (full hash in
  metadata), revision = run.json's git revision (`-dirty` -> dirty=True; none when unknown),
  packages = the library versions run.json recorded, metadata = the rest of run.json's
  environment. config.epochs = the highest epoch, turn_limit = max rounds, time_limit = the
  instance deadline. status is "success", or "cancelled" when fewer cases have a result than
  the run selected (a stopped run).
- One sample per results.jsonl entry; when a (case, epoch) appears twice (an infra_error
  retried by a resume that did not compact), the last line wins, since the instance
  directory holds that attempt's record. id = case id, epoch = the entry's epoch,
  input = the instruction of the saved instance.json, target = the reference value of each
  metric as a JSON object {metric_id: expected} (null where a unit has none, e.g. a judge).
- messages = the transcript's messages one for one, as they were sent: system, user (task
  and CodeAct observations, JSON-action tool results), assistant (with `tool_calls` for
  native function calls), tool (native call results; `error` set when the tool refused).
  So a sample's message count and roles are the transcript's.
- output = the final report (report.md) as the assistant's completion; none when empty.
- scores = {"eegbench": Score(value = the results line's score, 0..100 as eegbench reports
  it, answer = the report's start, explanation = one line per validation unit, metadata =
  per-unit score, weight, predicted and expected values, parse method, violations)}. A
  finished entry with no scored unit gets Inspect's unscored score (NaN, left out of means).
- metadata: task id, subset, difficulty, status, rounds, tokens, duration, unscored units,
  violations, paradigm, the controller's error and infrastructure events.
  limit: eegbench's stop statuses as Inspect limits (max_rounds: turn, deadline: time,
  token_limit: token, max_tool_calls, repeated_failure, missing_action: custom with the ceiling).
- model_usage from the turns' token counts (omitted when the model reported none, as the
  oracle and scripted models do); started_at from the transcript, completed_at = started_at
  + the entry's duration, total_time = duration (format-1 runs recorded no start time).
- infra_error entries are included with `error` set (the controller's message) and no score.
- results: total and completed samples, and the mean score over the scored samples
  ("mean", computed as eegbench's summary computes it); stats: the earliest start, the
  latest end (left empty for format-1 runs) and the summed model usage.
"""
from __future__ import annotations

import json
import math
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalError,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalRevision,
    EvalSample,
    EvalSampleLimit,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import Score
from inspect_ai.tool import ToolCall, ToolCallError

from runner.core.config import RunConfig
from runner.core.transcript import ToolCallRecord
from runner.run.records import ResultRecord, RunRecord, TranscriptRecord
from runner.run.store import RunStore
from validation.errors import MetricConfigError, UserError
from validation.instance import Instance
from validation.scoring import InstanceScore
from validation.unit import ground_truth

TASK = "eegbench"
SCORER = "eegbench"
FORMATS: dict[str, Literal["eval", "json"]] = {".eval": "eval", ".json": "json"}
ANSWER_CHARS = 2000  # the score's answer is an excerpt: the full report is the sample's output


def default_path(store: RunStore) -> Path:
    """runs/<run>/export/<run>.eval."""
    return store.root / "export" / f"{store.run_id}.eval"


def export_run(store: RunStore, out: Path) -> EvalLog:
    """Write the run as an Inspect log at `out` (.eval or .json) and return the log."""
    log_format = FORMATS.get(out.suffix.lower())
    if log_format is None:
        raise UserError(f"export: {out} must end in .eval or .json (Inspect's two log formats)")
    log = build_log(store)
    out.parent.mkdir(parents=True, exist_ok=True)
    # Written beside the target and renamed, so a failed export never leaves a torn log
    # that `inspect view` would list.
    partial = out.with_name(f".{out.name}.partial")
    write_eval_log(log, partial, format=log_format)
    os.replace(partial, out)
    return log


def build_log(store: RunStore) -> EvalLog:
    """The whole run as one EvalLog (header, samples, results and stats)."""
    record = store.read_run()
    config = RunConfig.from_record(record.config)
    samples = [_sample(store, config, result) for result in store.latest_results()]
    return EvalLog(
        status=_status(record.environment(), samples),
        eval=_spec(store, record, config, samples),
        results=_results(samples),
        stats=_stats(samples),
        samples=samples,
    )


def _status(environment: dict[str, Any], samples: list[EvalSample]) -> Literal["success", "cancelled"]:
    selected = environment.get("instances")
    cases = {sample.id for sample in samples}
    return "cancelled" if isinstance(selected, int) and len(cases) < selected else "success"


# -- the header ----------------------------------------------------------------------------


def _spec(store: RunStore, record: RunRecord, config: RunConfig, samples: list[EvalSample]) -> EvalSpec:
    environment = record.environment()
    instance_set = environment.get("instance_set_hash")
    model_info = environment.get("model")
    base_url = model_info.get("base_url") if isinstance(model_info, dict) else None
    return EvalSpec(
        run_id=store.run_id,
        created=_created(samples),
        task=TASK,
        task_args=config.model_dump(mode="json", exclude={"run_id", "model", "model_settings"}),
        solver=config.paradigm,
        dataset=EvalDataset(
            name=f"{TASK}-{instance_set[:12]}" if isinstance(instance_set, str) else TASK,
            location=config.cases_dir or "instances",
            samples=len({sample.id for sample in samples}),
            sample_ids=sorted({str(sample.id) for sample in samples}),
        ),
        model=config.model,
        model_generate_config=_generate_config(config),
        model_base_url=base_url if isinstance(base_url, str) else None,
        config=EvalConfig(
            epochs=max((sample.epoch for sample in samples), default=1),
            turn_limit=config.controls.max_rounds,
            time_limit=int(config.controls.deadline_s),
        ),
        revision=_revision(environment.get("git_revision")),
        packages={str(k): str(v) for k, v in (environment.get("libraries") or {}).items()},
        metadata={"format_version": record.format_version,
                  **{k: v for k, v in environment.items() if k not in ("libraries", "git_revision")}},
    )


def _generate_config(config: RunConfig) -> GenerateConfig:
    settings = config.model_settings
    return GenerateConfig(
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        stop_seqs=list(settings.stop) if settings.stop else None,
        timeout=int(settings.timeout_s),
        max_retries=settings.max_retries,
    )


def _revision(revision: object) -> EvalRevision | None:
    """run.json's "<sha>[-dirty]"; None for "unknown" (no git) or when absent."""
    if not isinstance(revision, str) or not revision or revision == "unknown":
        return None
    commit, dirty, _ = revision.partition("-dirty")
    # run.json records no remote: origin stays empty rather than guessed.
    return EvalRevision(type="git", origin="", commit=commit, dirty=bool(dirty))


def _created(samples: list[EvalSample]) -> str:
    """When the run started: its first instance's start; now for runs that recorded none."""
    starts = [sample.started_at for sample in samples if sample.started_at]
    return min(starts) if starts else _iso(datetime.now(timezone.utc).timestamp())


def _iso(unix: float) -> str:
    # One fixed width, so the earliest and latest times are the least and greatest strings.
    return datetime.fromtimestamp(unix, timezone.utc).isoformat(timespec="microseconds")


# -- one sample ----------------------------------------------------------------------------


def _sample(store: RunStore, config: RunConfig, result: ResultRecord) -> EvalSample:
    transcript = store.read_transcript(result.key)
    instance = store.saved_instance(result.key)
    report = store.read_report(result.key)
    usage = _usage(transcript)
    started = transcript.started_at
    return EvalSample(
        id=result.case_id,
        epoch=result.epoch,
        input=instance.agent_input.instruction,
        target=json.dumps(expected_values(instance), ensure_ascii=False, default=str),
        messages=transcript_messages(transcript, config.model),
        output=_output(report, config.model, usage),
        scores=sample_scores(result, store.read_score(result.key), report),
        metadata=sample_metadata(result, transcript),
        model_usage={config.model: usage} if usage is not None else {},
        started_at=_iso(started) if started is not None else None,
        completed_at=_iso(started + result.duration_s) if started is not None else None,
        total_time=result.duration_s,
        error=_error(result, transcript),
        limit=_limit(result, config),
        turn_count=result.rounds,
    )


def expected_values(instance: Instance) -> dict[str, Any]:
    """Each metric's reference value (None where a unit has no single one, e.g. a judge)."""
    expected: dict[str, Any] = {}
    for metric in instance.eval_config.metrics:
        try:
            expected[metric.metric_id] = ground_truth(metric.params)
        except MetricConfigError:
            expected[metric.metric_id] = None  # judge and artifact units may have no single value
    return expected


def sample_metadata(result: ResultRecord, transcript: TranscriptRecord) -> dict[str, Any]:
    """What a sample's metadata holds: the results line's fields, the paradigm, error and events."""
    return {
        "task_id": result.task_id,
        "bench_subset": result.bench_subset,
        "difficulty": result.difficulty,
        "status": result.status,
        "rounds": result.rounds,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "duration_s": result.duration_s,
        "unscored": result.unscored,
        "violations": result.violations,
        "paradigm": transcript.paradigm,
        "error": result.error or transcript.error,
        "infra_events": [event.model_dump(mode="json") for event in transcript.events],
    }


def _usage(transcript: TranscriptRecord) -> ModelUsage | None:
    """Tokens summed over the turns that reported them; None when none did."""
    reported = [t.usage for t in transcript.turns
                if t.usage.prompt_tokens is not None or t.usage.completion_tokens is not None]
    if not reported:
        return None
    prompt = sum(u.prompt_tokens or 0 for u in reported)
    completion = sum(u.completion_tokens or 0 for u in reported)
    reasoning = [u.reasoning_tokens for u in reported if u.reasoning_tokens is not None]
    return ModelUsage(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion,
                      reasoning_tokens=sum(reasoning) if reasoning else None)


def _output(report: str, model: str, usage: ModelUsage | None) -> ModelOutput:
    if not report:
        return ModelOutput(model=model, usage=usage)
    message = ChatMessageAssistant(content=report, model=model, source="generate")
    return ModelOutput(model=model, choices=[ChatCompletionChoice(message=message, stop_reason="stop")],
                       completion=report, usage=usage)


def _error(result: ResultRecord, transcript: TranscriptRecord) -> EvalError | None:
    if result.status != "infra_error":
        return None
    message = result.error or transcript.error or "infrastructure error"
    # eegbench keeps the message, not a traceback: Inspect requires the fields, so they repeat it.
    return EvalError(message=message, traceback=message, traceback_ansi=message)


# Stops that are a ceiling being reached, as Inspect's limits; solution, forced_solution and
# infra_error are not limits.
_LIMITS: dict[str, tuple[Literal["turn", "time", "token", "custom"], str]] = {
    "max_rounds": ("turn", "max_rounds"),
    "deadline": ("time", "deadline_s"),
    "token_limit": ("token", "max_instance_tokens"),
    "max_tool_calls": ("custom", "max_tool_calls"),
    "repeated_failure": ("custom", "repeat_limit"),
    "missing_action": ("custom", "max_no_action"),
}


def _limit(result: ResultRecord, config: RunConfig) -> EvalSampleLimit | None:
    if result.status not in _LIMITS:
        return None
    kind, control = _LIMITS[result.status]
    ceiling = float(getattr(config.controls, control))
    return EvalSampleLimit(type=kind, limit=ceiling, reason=f"eegbench status {result.status} ({control}={ceiling:g})")


# -- messages ------------------------------------------------------------------------------


def transcript_messages(transcript: TranscriptRecord, model: str) -> list[ChatMessage]:
    """The transcript's messages one for one (a dropped or merged one would misplace turns)."""
    records = {c.call_id: c for turn in transcript.turns for c in turn.tool_calls if c.call_id}
    return chat_messages(transcript.messages, model, records)


def chat_messages(messages: list[dict[str, Any]], model: str,
                  records: dict[str, ToolCallRecord] | None = None) -> list[ChatMessage]:
    """eegbench's messages (as sent to a model) as Inspect's, one for one; `records` (call id
    -> the tool call's record) marks the tool results that were errors."""
    names: dict[str, str] = {}  # call id -> function, from the assistant message that made it
    return [_message(entry, model, names, records or {}) for entry in messages]


def _message(entry: dict[str, Any], model: str, names: dict[str, str],
             records: dict[str, ToolCallRecord]) -> ChatMessage:
    role = entry.get("role")
    content = _text(entry.get("content"))
    if role == "system":
        return ChatMessageSystem(content=content)
    if role == "assistant":
        calls = [_tool_call(call) for call in entry.get("tool_calls") or []]
        names.update({call.id: call.function for call in calls})
        return ChatMessageAssistant(content=content, tool_calls=calls or None, model=model, source="generate")
    if role == "tool":
        call_id = entry.get("tool_call_id")
        record = records.get(call_id) if isinstance(call_id, str) else None
        return ChatMessageTool(content=content, tool_call_id=call_id, function=names.get(call_id or ""),
                               error=_tool_error(record))
    if role == "user":
        return ChatMessageUser(content=content)
    # A role eegbench does not send: kept as a user message, named, so counts still match.
    return ChatMessageUser(content=content, metadata={"eegbench_role": role})


def _text(content: object) -> str:
    if content is None:
        return ""  # an assistant message that only calls tools
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _tool_call(call: dict[str, Any]) -> ToolCall:
    """An OpenAI-format call; arguments that are not a JSON object are kept as parse_error."""
    function = call.get("function") or {}
    raw = function.get("arguments")
    arguments: dict[str, Any] = {}
    problem = None
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError as exc:
        parsed, problem = None, f"arguments are not JSON ({exc}): {raw}"
    if isinstance(parsed, dict):
        arguments = parsed
    elif problem is None and parsed is not None:
        problem = f"arguments are not a JSON object: {raw}"
    return ToolCall(id=str(call.get("id") or ""), function=str(function.get("name") or ""),
                    arguments=arguments, parse_error=problem)


def _tool_error(record: ToolCallRecord | None) -> ToolCallError | None:
    if record is None or record.status != "error":
        return None
    kind: Literal["limit", "unknown"] = "limit" if record.error_code == "budget_exceeded" else "unknown"
    return ToolCallError(type=kind, message=record.error_code or "refused")


# -- the score -----------------------------------------------------------------------------


def sample_scores(result: ResultRecord, score: InstanceScore | None, report: str) -> dict[str, Score] | None:
    """The results line and its score.json as Inspect's score "eegbench" (none for infra_error)."""
    if result.status == "infra_error":
        return None  # never scored: the sample carries an error instead
    answer = report[:ANSWER_CHARS] + ("…" if len(report) > ANSWER_CHARS else "")
    explanation = _explanation(score)
    metadata = _score_metadata(score)
    if result.score is None:
        return {SCORER: Score.unscored(reason="no scored unit", answer=answer, explanation=explanation,
                                       metadata=metadata)}
    return {SCORER: Score(value=result.score, answer=answer, explanation=explanation, metadata=metadata)}


def _explanation(score: InstanceScore | None) -> str:
    if score is None:
        return "no score.json"
    lines = [f"parsed by {score.parse_method}; score = weighted mean of the scored units (0..100)"]
    for metric in score.metrics:
        verdict = f"{metric.score:g}" if metric.scored and metric.score is not None else "unscored"
        lines.append(f"- {metric.metric_id} ({metric.type}, weight {metric.weight:g}): {verdict}: {metric.detail}")
    lines += [f"violation: {violation}" for violation in score.violations]
    return "\n".join(lines)


def _score_metadata(score: InstanceScore | None) -> dict[str, Any] | None:
    if score is None:
        return None
    units = {
        metric.metric_id: {"type": metric.type, "target_key": metric.target_key, "weight": metric.weight,
                           "score": metric.score, "scored": metric.scored,
                           "predicted": metric.predicted, "expected": metric.expected}
        for metric in score.metrics
    }
    return {"units": units, "parse_method": score.parse_method, "all_scored": score.all_scored,
            "unscored": score.unscored, "violations": score.violations}


# -- results and stats ---------------------------------------------------------------------


def _results(samples: list[EvalSample]) -> EvalResults:
    values = [_value(sample) for sample in samples]
    scored = [v for v in values if v is not None]
    scores = []
    if scored:
        # The same mean as eegbench's summary: over every scored entry, unscored ones left out.
        mean = round(math.fsum(scored) / len(scored), 6)
        scores.append(EvalScore(name=SCORER, scorer=SCORER, scored_samples=len(scored),
                                unscored_samples=len(values) - len(scored),
                                metrics={"mean": EvalMetric(name="mean", value=mean)}))
    return EvalResults(total_samples=len(samples),
                       completed_samples=sum(sample.error is None for sample in samples), scores=scores)


def _value(sample: EvalSample) -> float | None:
    score = (sample.scores or {}).get(SCORER)
    if score is None or not isinstance(score.value, (int, float)) or math.isnan(score.value):
        return None
    return float(score.value)


def _stats(samples: list[EvalSample]) -> EvalStats:
    usage: dict[str, ModelUsage] = {}
    for sample in samples:
        for model, used in sample.model_usage.items():
            usage[model] = usage[model] + used if model in usage else used
    starts = [s.started_at for s in samples if s.started_at]
    ends = [s.completed_at for s in samples if s.completed_at]
    return EvalStats(started_at=min(starts) if starts else "", completed_at=max(ends) if ends else "",
                     model_usage=usage)
