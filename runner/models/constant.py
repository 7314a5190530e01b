"""The guessing floor as a model: every instance answered with its task's best constant.

For each task, the answer to each metric that a constant can answer is the one scoring best
on the task's whole instance set (validation/baseline.py, the `instances --stats` and report
floors), whatever the instance's data. The run then measures through the real harness
(parser, scorer, sandbox controls) what guessing earns, so a leaderboard can put null,
constant and oracle side by side. The instance set is the built-in benchmark with the local
instances; a task outside it is answered with an empty solution.
"""
from __future__ import annotations

import json
from typing import Any

from runner.core.paths import Environment
from runner.core.settings import ModelSettings
from runner.core.transcript import Usage
from runner.models.base import Completion, Message, Model, ModelSession
from runner.models.null import EMPTY_ANSWER, EMPTY_SOLUTION
from validation.baseline import task_baselines
from validation.instance import Instance


class ConstantModel(Model):
    """Answers each instance with its task's best constant answer, in one turn."""

    name = "constant"

    def __init__(self, instances: list[Instance]) -> None:
        self._answers = best_answers(instances)

    def session(self, instance: Instance) -> ModelSession:
        """A session that gives the constant answer at every turn."""
        return _ConstantSession(self.answer(instance))

    def answer(self, instance: Instance) -> dict[str, Any]:
        """{target key: the task's best constant} for the instance's constant-answerable metrics."""
        constants = self._answers.get(instance.task_id, {})
        return {m.target_key: constants[m.metric_id] for m in instance.eval_config.metrics
                if m.metric_id in constants and m.target_key != "full_text"}


def best_answers(instances: list[Instance]) -> dict[str, dict[str, Any]]:
    """Task id -> metric id -> the constant answer scoring best over the task's instances."""
    return {task.task_id: {m.metric_id: m.best_answer for m in task.metrics} for task in task_baselines(instances)}


class _ConstantSession(ModelSession):
    def __init__(self, answer: dict[str, Any]) -> None:
        self._answer = answer

    def complete(self, messages: list[Message]) -> Completion:
        if not self._answer:
            return Completion(text=EMPTY_SOLUTION, usage=Usage(), latency_s=0.0)
        body = json.dumps(self._answer, sort_keys=True, indent=2, ensure_ascii=False)
        return Completion(text="<solution>\n```json\n" + body + "\n```\n</solution>", usage=Usage(), latency_s=0.0)

    def complete_with_tools(self, messages: list[Message], tools: list[dict[str, Any]]) -> Completion:
        if not self._answer:
            return Completion(text=EMPTY_ANSWER, usage=Usage(), latency_s=0.0)
        answer = self._answer["answer"] if set(self._answer) == {"answer"} else self._answer
        return Completion(text=json.dumps({"action": "final_answer", "answer": answer}), usage=Usage(), latency_s=0.0)


def build(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    """MODEL=constant: each task's best constant over the built-in and local instances."""
    from runner.benchmark import catalog

    return ConstantModel(catalog.load_all(env.paths.instances_dir, env.paths.local_instances))
