"""A run as reports read it: one RunInfo, and one InstanceRow per run of an instance.

Everything comes from the run directory through RunStore: results.jsonl for the outcome, the
saved instance.json for subset, task, difficulty and unit types (never the current catalog,
so an old run's numbers do not move when instances are regenerated), score.json (or a named
re-score) for per-unit verdicts and the scoring roles' usage, transcript.json for tool calls,
observation errors and infrastructure events.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from runner.core.transcript import Observation, ToolCallRecord
from runner.run.recorded import MissingRecord
from runner.run.records import ResultRecord, TranscriptRecord, entry_key
from runner.run.store import RunStore
from validation.errors import UserError
from validation.instance import DIFFICULTY_LEVELS, Instance
from validation.scoring import InstanceScore
from validation.unit_registry import UNITS

ROLES = ("target", "parser", "judge", "vlm_judge")
# Statuses where the model ended with a final report of its own (forced_solution: on the
# last round, as BrainBench's CodeAct asks for one).
ANSWERED = ("solution", "forced_solution")


class OverloadedTimeout(BaseModel):
    """A timed-out execution that coincided with host overload (Observation.host_overloaded)."""

    turn: int
    duration_s: float
    cpu_s: float
    host_load: float  # 1-minute load average per CPU


class UnitRow(BaseModel):
    """One validation unit's verdict in one instance run."""

    metric_id: str
    type: str
    family: str  # numeric, categorical, set, sequence, semantic, artifact, events
    weight: float
    score: float | None  # 0..1; None when not scored
    scored: bool
    predicted: Any = None
    expected: Any = None
    detail: str = ""


class RoleCost(BaseModel):
    """Calls, tokens and wall time one role spent on one instance run."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0  # part of completion_tokens, where the endpoint reports it
    seconds: float = 0.0


class InstanceRow(BaseModel):
    """One run of one instance (one epoch), as every report table reads it."""

    run_id: str
    model: str
    paradigm: str
    case_id: str
    epoch: int
    task_id: str
    subset: str
    difficulty: str | None
    kind: str | None = None  # the task's kind (recipe, open, long_horizon), from the saved instance
    weight: float  # BrainBench's per-instance weight: numeric `difficult`, else the level 1-3
    status: str
    score: float | None  # 0..100; None for infra_error
    valid_response: bool  # a report from which at least one target field was parsed
    rounds: int
    duration_s: float
    roles: dict[str, RoleCost] = Field(default_factory=dict)
    units: list[UnitRow] = Field(default_factory=list)
    parse_method: str | None = None
    parse_failed: bool = False  # a report was there but no field could be read from it
    unscored: list[str] = Field(default_factory=list)
    violations: int = 0
    observation_errors: list[str] = Field(default_factory=list)  # exception names, in order
    overloaded_timeouts: list[OverloadedTimeout] = Field(default_factory=list)  # Observation.host_overloaded
    tool_calls: dict[str, int] = Field(default_factory=dict)  # tools and hybrid paradigms
    events: dict[str, int] = Field(default_factory=dict)  # infrastructure events by kind
    error: str | None = None
    reference: dict[str, Any] = Field(default_factory=dict)  # the binding's params (e.g. T2's snr_db)
    variant_of: str | None = None  # a leak-resistant variant's original case id (truth --variants)
    transform: str | None = None  # the transformation that made the variant

    @property
    def key(self) -> str:
        """The entry key naming the run directory's instances/<key>/ (see records.entry_key)."""
        return entry_key(self.case_id, self.epoch)

    @property
    def scored(self) -> bool:
        """Counted in scores: everything but infra_error."""
        return self.status != "infra_error" and self.score is not None

    @property
    def level(self) -> int | None:
        """The difficulty as a number (easy 1, medium 2, hard 3)."""
        return DIFFICULTY_LEVELS.get(self.difficulty or "")

    @property
    def label(self) -> str:
        """model · paradigm, how tables name the row's configuration."""
        return f"{self.model} · {self.paradigm}"


class RunInfo(BaseModel):
    """What a run is: model, paradigm, settings and provenance, from run.json."""

    run_id: str
    path: str
    model: str
    paradigm: str
    sandbox: str
    instance_set_hash: str | None
    selection: list[str] | None  # SET= (subsets, tasks, case ids); empty: every instance
    parser: str  # "rules", "llm", "hybrid"...
    parser_model: str | None  # the parser endpoint's model name
    judge: str | None
    vlm_judge: str | None
    self_parsed: bool  # the evaluated model's own endpoint parsed its reports
    scores: str | None  # the re-score the rows were read from (None: as run)
    controls: dict[str, Any]
    resources: dict[str, Any]
    model_settings: dict[str, Any]
    epochs: int
    git_revision: str | None
    libraries: dict[str, str]
    python: str | None
    platform: str | None
    format_version: int
    started_at: float | None  # Unix time of the first instance's start
    finished_at: float | None  # of the last instance's end
    # Per task and metric, [chance, best-constant score] (0-1) over the task's whole instance
    # set, as eval recorded it; None for runs made before it did (runner/report/floors.py).
    floors: dict[str, dict[str, list[float]]] | None = None
    # Per task, {"caught": k, "mutants": n}: the mistake-sensitivity record the run was made
    # under (runner/benchmark/sensitivity.py); None for runs made before eval recorded it.
    sensitivity: dict[str, dict[str, int]] | None = None

    @property
    def label(self) -> str:
        """model · paradigm."""
        return f"{self.model} · {self.paradigm}"


@dataclass
class RunData:
    """A loaded run: its description, its rows, and the store for reading further records."""

    info: RunInfo
    rows: list[InstanceRow]
    store: RunStore

    @property
    def run_id(self) -> str:
        """The run's name."""
        return self.info.run_id


def load_run(store: RunStore, scores: str | None = None) -> RunData:
    """Read a run; `scores` names a re-score (scores/<name>.jsonl) to read verdicts from."""
    record = store.read_run()
    config = store.config()
    environment = record.environment()
    scoring = _scoring(store, environment, scores)
    rows: list[InstanceRow] = []
    starts: list[float] = []
    ends: list[float] = []
    for result in store.latest_results():
        transcript = _transcript(store, result)
        if transcript is not None and transcript.started_at is not None:
            starts.append(transcript.started_at)
            ends.append(transcript.started_at + result.duration_s)
        rows.append(_row(store, config.model, config.paradigm, result, transcript, scores))
    info = RunInfo(
        run_id=store.run_id,
        path=str(store.root),
        model=_model_name(config.model, environment),
        paradigm=config.paradigm,
        sandbox=str(environment.get("sandbox_backend") or config.sandbox),
        instance_set_hash=environment.get("instance_set_hash"),
        selection=config.selection,
        parser=str(scoring.get("parser") or "rules"),
        parser_model=_endpoint_model(scoring.get("parser_model")),
        judge=_endpoint_model(scoring.get("judge")),
        vlm_judge=_endpoint_model(scoring.get("vlm_judge")),
        self_parsed=_self_parsed(config.model, environment, scoring),
        scores=scores,
        controls=config.controls.model_dump(mode="json"),
        resources=config.resources.model_dump(mode="json"),
        model_settings=config.model_settings.model_dump(mode="json"),
        epochs=max([r.epoch for r in rows], default=1),
        git_revision=environment.get("git_revision"),
        libraries={str(k): str(v) for k, v in (environment.get("libraries") or {}).items()},
        python=environment.get("python"),
        platform=environment.get("platform"),
        format_version=record.format_version,
        started_at=min(starts) if starts else None,
        finished_at=max(ends) if ends else None,
        floors=environment.get("floors"),
        sensitivity=environment.get("sensitivity"),
    )
    for row in rows:
        row.model = info.model
    return RunData(info=info, rows=rows, store=store)


def _scoring(store: RunStore, environment: dict[str, Any], scores: str | None) -> dict[str, Any]:
    if scores is None:
        return dict(environment.get("scoring") or {})
    settings = store.read_scores_settings(scores)
    if settings is None:
        raise UserError(f"run {store.run_id} has no re-score named {scores!r} (eegbench score {store.run_id} "
                        f"--name {scores})")
    return settings


def _model_name(spec: str, environment: dict[str, Any]) -> str:
    described = environment.get("model") or {}
    name = described.get("name") if isinstance(described, dict) else None
    return str(name or spec)


def _endpoint_model(described: Any) -> str | None:
    if described is None:
        return None
    if isinstance(described, dict):
        return str(described.get("model") or described.get("name") or "?")
    return str(described)


def _self_parsed(spec: str, environment: dict[str, Any], scoring: dict[str, Any]) -> bool:
    parser = _endpoint_model(scoring.get("parser_model"))
    return parser is not None and parser in (spec, _model_name(spec, environment))


def _transcript(store: RunStore, result: ResultRecord) -> TranscriptRecord | None:
    try:
        return store.read_transcript(result.key)
    except MissingRecord:
        return None


def _row(store: RunStore, model: str, paradigm: str, result: ResultRecord,
         transcript: TranscriptRecord | None, scores: str | None) -> InstanceRow:
    instance = _saved(store, result)
    score = store.read_rescore(result.key, scores) if scores else store.read_score(result.key)
    meta = instance.meta_info if instance is not None else None
    units = _units(score)
    return InstanceRow(
        run_id=store.run_id,
        model=model,
        paradigm=paradigm,
        case_id=result.case_id,
        epoch=result.epoch,
        task_id=result.task_id,
        subset=result.bench_subset,
        difficulty=result.difficulty or (meta.difficulty if meta else None),
        kind=meta.kind if meta else None,
        variant_of=(meta.model_extra or {}).get("variant_of") if meta else None,
        transform=((meta.model_extra or {}).get("variant") or {}).get("transform") if meta else None,
        weight=instance_weight(instance),
        status=result.status,
        score=_score(result, score, scores),
        valid_response=_valid(score),
        rounds=result.rounds,
        duration_s=result.duration_s,
        roles=_roles(result, transcript, score),
        units=units,
        parse_method=score.parse_method if score else None,
        parse_failed=bool(score is not None and _has_report(store, result) and not _valid(score)),
        unscored=score.unscored if (scores and score) else result.unscored,
        violations=len(score.violations) if (scores and score) else result.violations,
        observation_errors=_observation_errors(transcript),
        overloaded_timeouts=_overloaded_timeouts(transcript),
        tool_calls=_tool_calls(transcript),
        events=dict(Counter(e.kind for e in transcript.events)) if transcript else {},
        error=result.error,
        reference=dict(instance.reference.params) if instance is not None and instance.reference else {},
    )


def _saved(store: RunStore, result: ResultRecord) -> Instance | None:
    try:
        return store.saved_instance(result.key)
    except MissingRecord:
        return None


def _score(result: ResultRecord, score: InstanceScore | None, scores: str | None) -> float | None:
    if result.status == "infra_error":
        return None
    if scores is None:
        return result.score
    return score.score if score is not None else None


def instance_weight(instance: Instance | None) -> float:
    """BrainBench's per-instance weight: `meta_info.difficult` when it is a number (its
    runner's convention, default 1.0); our instances name a level there, weighted 1, 2, 3."""
    if instance is None:
        return 1.0
    difficult = instance.meta_info.difficult
    if isinstance(difficult, (int, float)) and not isinstance(difficult, bool) and difficult > 0:
        return float(difficult)
    if isinstance(difficult, str):
        try:
            number = float(difficult)
        except ValueError:
            return float(DIFFICULTY_LEVELS.get(difficult, 1))
        return number if math.isfinite(number) and number > 0 else 1.0
    return 1.0


def _units(score: InstanceScore | None) -> list[UnitRow]:
    if score is None:
        return []
    return [UnitRow(metric_id=m.metric_id, type=m.type, family=unit_family(m.type), weight=m.weight,
                    score=m.score, scored=m.scored, predicted=m.predicted, expected=m.expected,
                    detail=m.detail) for m in score.metrics]


def unit_family(kind: str) -> str:
    """The validation-unit family of a metric type ("other" for a type no longer known)."""
    if kind not in UNITS:
        return "other"
    return UNITS.get(kind).family


def _valid(score: InstanceScore | None) -> bool:
    """BrainBench's valid response: the report yielded a usable target output, i.e. at least
    one metric had a prediction to compare (or an artifact to check)."""
    if score is None:
        return False
    return any(m.predicted is not None for m in score.metrics) or any(v is not None for v in score.fields.values())


def _has_report(store: RunStore, result: ResultRecord) -> bool:
    return bool(store.read_report(result.key).strip())


def _roles(result: ResultRecord, transcript: TranscriptRecord | None,
           score: InstanceScore | None) -> dict[str, RoleCost]:
    target = RoleCost(calls=len(transcript.turns) if transcript else result.rounds,
                      prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
                      reasoning_tokens=result.reasoning_tokens,
                      seconds=round(math.fsum(t.latency_s for t in transcript.turns), 3) if transcript else 0.0)
    roles = {"target": target}
    for turn in transcript.turns if transcript else []:
        if turn.role:  # brainagent: the target's tokens split by the role it played
            part = roles.setdefault(f"target:{turn.role}", RoleCost())
            part.calls += 1
            part.prompt_tokens += turn.usage.prompt_tokens or 0
            part.completion_tokens += turn.usage.completion_tokens or 0
            part.reasoning_tokens += turn.usage.reasoning_tokens or 0
            part.seconds = round(part.seconds + turn.latency_s, 3)
    if score is not None:
        calls = [("parser", c) for c in score.parser_calls] + [("judge", c) for c in score.judge_calls]
        for default, call in calls:
            _add_call(roles.setdefault(str(call.get("role") or default), RoleCost()), call)
    return roles


def _add_call(cost: RoleCost, call: dict[str, Any]) -> None:
    cost.calls += 1
    cost.prompt_tokens += int(call.get("prompt_tokens") or 0)
    cost.completion_tokens += int(call.get("completion_tokens") or 0)
    cost.seconds = round(cost.seconds + float(call.get("latency_s") or 0.0), 3)


def _observation_errors(transcript: TranscriptRecord | None) -> list[str]:
    if transcript is None:
        return []
    names = [t.observation.error_name or t.observation.status for t in transcript.turns
             if t.observation is not None and t.observation.status != "ok"]
    names += [c.error_code or "error" for t in transcript.turns for c in t.tool_calls if c.status == "error"]
    return names


def _overloaded_timeouts(transcript: TranscriptRecord | None) -> list[OverloadedTimeout]:
    if transcript is None:
        return []
    found: list[tuple[int, Observation | ToolCallRecord]] = [(t.index, t.observation) for t in transcript.turns
             if t.observation is not None and t.observation.host_overloaded()]
    found += [(t.index, c) for t in transcript.turns for c in t.tool_calls if c.host_overloaded()]
    return [OverloadedTimeout(turn=turn, duration_s=x.duration_s, cpu_s=x.cpu_s or 0.0, host_load=x.host_load or 0.0)
            for turn, x in found]


def _tool_calls(transcript: TranscriptRecord | None) -> dict[str, int]:
    if transcript is None:
        return {}
    return dict(Counter(c.name for t in transcript.turns for c in t.tool_calls))
