"""Tool plans: per task, a short sequence of toolset calls that reproduces the ground truth.

A plan is data (reference_plans/<task_id>.json), like a reference script but composed only of
braintools calls, so it proves the toolset covers the task. The oracle plays it through the
real supervisor and subagents; `eegbench plans check` runs it in-process to author it.

    {"task_id": "fa_hjorth", "agent": "FoundationalAgent",
     "steps": [{"as": "rec", "tool": "load_recording", "args": {"path": "{input}"}},
               {"as": "x", "tool": "pick_channels", "args": {"recording": "$rec", "channels": ["{channel}"]}}, ...],
     "report": {"mobility": {"from": "h", "path": ["features", "value", "{channel}", "hjorth_mobility"], "round": 2}}}

Templates, in any string: "{name}" alone is the instance parameter itself (any JSON type);
inside longer text it is formatted in; "{input}", "{input0}", "{input1}", ... are the sandbox
input paths and "{inputs}" their list. "$alias" is the id that step `alias` registered (its
first output with an id; "$alias.key" names the output). {"from": alias, "path": [...]} is a
value read out of that step's response, the same in arguments and in the report. A report
entry may also be {"param": name}, {"map": <value>, "cases": {"true": ..., "false": ...}}, or
{"template": "text {a}", "values": {"a": <value>}}; "round" applies to numbers and lists.

A step may carry "when": {"from": alias, "path": [...], "equals": <value>}: it runs only if
that value equals the given one, as an agent decides from what it has seen (a refusal check,
say). A step that does not run, or that needs one that did not, is skipped; a value read
from a skipped step is its reference's "default" (an error without one).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from validation.errors import UserError
from validation.instance import Instance

PLANS_DIR = "reference_plans"
_TEMPLATE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)\}")
_ALIAS = re.compile(r"\$([A-Za-z_]\w*)(\.\w+)?")  # "$alias" or "$alias.output"


class PlanError(UserError, ValueError):
    """A plan that cannot be read, or that names an alias, parameter or path that does not exist."""


class PlanStep(BaseModel):
    """One tool call; `as` names it for later references."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    alias: str = Field(alias="as")
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    when: dict[str, Any] | None = None  # {"from", "path", "equals"}: run only if that value equals


class Plan(BaseModel):
    """A task's tool plan: the subagent that runs it, its calls, and how its report is written."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    agent: str | None = None  # default: the subagent of the task's subset
    objective: str | None = None  # how the supervisor phrases the delegation (default: the instruction)
    steps: list[PlanStep]
    report: dict[str, Any]
    notes: str | None = None


def plan_path(project_root: Path, task_id: str) -> Path:
    """Where a task's plan lives."""
    return Path(project_root) / PLANS_DIR / f"{task_id}.json"


def load_plan(project_root: Path, task_id: str) -> Plan:
    """The task's plan; PlanError names the file and the problem."""
    path = plan_path(project_root, task_id)
    try:
        plan = Plan.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PlanError(f"{task_id}: no tool plan at {path} ({exc.strerror})") from exc
    except ValueError as exc:
        raise PlanError(f"{path}: {exc}") from exc
    if plan.task_id != task_id:
        raise PlanError(f"{path}: task_id {plan.task_id!r} is not {task_id!r}")
    aliases = [s.alias for s in plan.steps]
    if len(set(aliases)) != len(aliases):
        raise PlanError(f"{path}: a step alias is used twice")
    return plan


class Bindings:
    """An instance's parameters and inputs, plus the responses of the steps run so far."""

    def __init__(self, instance: Instance) -> None:
        self.case_id = instance.case_id
        reference = instance.reference
        self.params: dict[str, Any] = dict(reference.params) if reference else {}
        inputs = instance.sandbox_inputs()
        self.params.update({"input": inputs[0] if inputs else None, "inputs": inputs,
                            **{f"input{i}": p for i, p in enumerate(inputs)}})
        self.responses: dict[str, dict[str, Any]] = {}
        self.skipped: set[str] = set()

    def settled(self, alias: str) -> bool:
        """Whether the step has run or been skipped."""
        return alias in self.responses or alias in self.skipped

    def ready(self, step: PlanStep) -> bool:
        """Whether every step this one refers to (arguments and condition) is settled."""
        return all(self.settled(alias) for alias in references([step.args, step.when]))

    def runs(self, step: PlanStep) -> bool:
        """Whether a ready step runs: nothing it needs was skipped, and its condition holds."""
        if references(step.args) & self.skipped:
            return False
        if step.when is None:
            return True
        if step.when.get("from") in self.skipped:
            return False
        return bool(self.resolve({"from": step.when["from"], "path": step.when.get("path", [])}) == step.when.get("equals"))

    def resolve(self, value: Any) -> Any:
        """`value` with its templates, aliases and value references filled in."""
        if isinstance(value, str):
            return self._string(value)
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            if "from" in value and "path" in value:
                return self._lookup(value)
            if "param" in value and len(value) == 1:
                return self._param(value["param"])
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    def report_value(self, entry: Any) -> Any:
        """One report entry: a value, a choice among cases, or a filled-in text; rounded if asked."""
        if isinstance(entry, dict) and "map" in entry:
            key = self.resolve(entry["map"])
            cases = entry.get("cases", {})
            text = json.dumps(key) if not isinstance(key, str) else key  # true, false, null, 3, "label"
            if text not in cases:
                raise PlanError(f"{self.case_id}: report map value {text!r} has no case in {list(cases)}")
            return self.resolve(cases[text])
        if isinstance(entry, dict) and "template" in entry:
            values = {k: self.report_value(v) for k, v in entry.get("values", {}).items()}
            return _TEMPLATE.sub(lambda m: _text(values[m.group(1)] if m.group(1) in values else self._param(m.group(1))),
                                 str(entry["template"]))
        value = self.resolve({k: v for k, v in entry.items() if k != "round"} if isinstance(entry, dict) else entry)
        decimals = entry.get("round") if isinstance(entry, dict) else None
        return _round(value, decimals) if decimals is not None else value

    def _string(self, text: str) -> Any:
        if _ALIAS.fullmatch(text):
            return self._id(text[1:])
        whole = _TEMPLATE.fullmatch(text)
        if whole:
            return self._param(whole.group(1))
        return _TEMPLATE.sub(lambda m: _text(self._param(m.group(1))), text)

    def _param(self, name: str) -> Any:
        value: Any = self.params
        for part in name.split("."):
            if not isinstance(value, dict) or part not in value:
                raise PlanError(f"{self.case_id}: the plan names parameter {name!r}, which the instance does not have")
            value = value[part]
        return value

    def _id(self, ref: str) -> str:
        alias, _, key = ref.partition(".")
        response = self._response(alias)
        outputs = [(k, v) for k, v in response.items() if isinstance(v, dict) and "id" in v]
        for name, output in outputs:
            if not key or name == key:
                return str(output["id"])
        raise PlanError(f"{self.case_id}: step {alias!r} registered no output {key or '(any)'!r}: {list(response)}")

    def _lookup(self, ref: dict[str, Any]) -> Any:
        if ref["from"] in self.skipped:
            if "default" not in ref:
                raise PlanError(f"{self.case_id}: step {ref['from']!r} was skipped and the reference has no default")
            return ref["default"]
        value: Any = self._response(ref["from"])
        for part in self.resolve(ref["path"]):
            if isinstance(value, dict) and str(part) in value:
                value = value[str(part)]
            elif isinstance(value, list) and isinstance(part, int) and -len(value) <= part < len(value):
                value = value[part]
            else:
                raise PlanError(f"{self.case_id}: {part!r} of path {ref['path']} is not in step {ref['from']!r}'s response")
        return value

    def _response(self, alias: str) -> dict[str, Any]:
        if alias not in self.responses:
            raise PlanError(f"{self.case_id}: the plan refers to step {alias!r} before it ran")
        response = self.responses[alias]
        if "error" in response:
            raise PlanError(f"{self.case_id}: step {alias!r} failed: {response['error']}")
        return response


def references(value: Any) -> set[str]:
    """The step aliases `value` refers to ("$alias", {"from": alias})."""
    if isinstance(value, str):
        match = _ALIAS.fullmatch(value)
        return {match.group(1)} if match else set()
    if isinstance(value, list):
        return set().union(*(references(v) for v in value)) if value else set()
    if isinstance(value, dict):
        found = {value["from"]} if isinstance(value.get("from"), str) else set()
        return found.union(*(references(v) for k, v in value.items() if k != "from")) if value else found
    return set()


def next_segment(plan: Plan, bindings: Bindings) -> list[PlanStep]:
    """The maximal executable segment: every unsettled step whose references have all run, in
    plan order (a step that waits for another does not hold back the independent steps after
    it, so a plan takes as many rounds as its longest chain of dependencies). Steps whose
    condition fails on what is known are marked skipped on the way. Empty when the plan is done
    or stuck."""
    segment: list[PlanStep] = []
    for step in plan.steps:
        if bindings.settled(step.alias) or not bindings.ready(step):
            continue
        if not bindings.runs(step):
            bindings.skipped.add(step.alias)
            continue
        segment.append(step)
    return segment


def finished(plan: Plan, bindings: Bindings) -> bool:
    """Whether every step has run or been skipped."""
    return all(bindings.settled(step.alias) for step in plan.steps)


def build_report(plan: Plan, bindings: Bindings) -> dict[str, Any]:
    """The plan's report: each target key's value, read from the step responses."""
    return {key: bindings.report_value(entry) for key, entry in plan.report.items()}


def _round(value: Any, decimals: int) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return round(float(value), decimals) if decimals > 0 else int(round(value))
    if isinstance(value, list):
        return [_round(v, decimals) for v in value]
    if isinstance(value, dict):
        return {k: _round(v, decimals) for k, v in value.items()}
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
