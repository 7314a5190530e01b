"""The oracle: runs the task's own reference script inside the instance's kernel.

Turn 1 sends the script source plus a call on the instance's /input paths and parameters;
the call prints one marker line with the result as JSON. Turn 2 reads that line back out of
the observation and answers with it as the solution. The oracle reads nothing from the host
but the script source, so a score below 100 means the harness (sandbox, inputs, parser,
validation) and the ground truth disagree: it is the installation and harness check.

Under BrainAgent the oracle plays the task's tool plan instead (runner/models/oracle_plan.py).

In the tools paradigm there is no kernel: the oracle answers at once with a final_answer
holding the reference result recorded in the instance (each metric's ground truth), which
checks the answer path (JSON action -> report -> parser -> validation) end to end.
"""
from __future__ import annotations

import ast
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from runner.benchmark.ensemble import consensus
from runner.core.paths import Environment
from runner.core.settings import ModelSettings
from runner.core.transcript import Usage
from runner.models.base import Completion, Message, Model, ModelError, ModelSession
from runner.models.oracle_plan import PlanPlayer, is_brainagent
from validation.instance import Instance
from validation.unit import ground_truth, has_ground_truth

RESULT_MARKER = "EEGBENCH_ORACLE_RESULT "
TAIL_CHARS = 2000  # how much of a failed run's output the solution quotes


class OracleModel(Model):
    """Runs each task's reference script in the instance's kernel: the harness check."""

    name = "oracle"

    def __init__(self, project_root: Path) -> None:
        self.project_root = Path(project_root)

    def session(self, instance: Instance) -> ModelSession:
        """A session that sends the reference script first, then answers with its result."""
        return _OracleSession(self.project_root, instance)


class _OracleSession(ModelSession):
    def __init__(self, project_root: Path, instance: Instance) -> None:
        self._root = project_root
        self._instance = instance
        self._calls = 0
        self._solution: str | None = None
        self._player: PlanPlayer | None = None

    def complete(self, messages: list[Message]) -> Completion:
        start = time.perf_counter()
        if is_brainagent(messages):
            return self._play(messages)
        self._calls += 1
        if self._calls == 1:
            text = execute_reply_for(self._root, self._instance)
        else:
            # Later calls (the controller asking again) get the same answer.
            if self._solution is None:
                self._solution = solution_reply(_last_user_text(messages), ensemble_types(self._instance))
            text = self._solution
        return Completion(text=text, usage=Usage(), latency_s=time.perf_counter() - start)

    def complete_with_tools(self, messages: list[Message], tools: list[dict[str, Any]]) -> Completion:
        if is_brainagent(messages):
            return self._play(messages)
        text = json.dumps({"action": "final_answer", "answer": reference_answer(self._instance)})
        return Completion(text=text, usage=Usage(), latency_s=0.0)


    def _play(self, messages: list[Message]) -> Completion:
        start = time.perf_counter()
        if self._player is None:
            self._player = PlanPlayer(self._root, self._instance)
        text = self._player.reply(messages)
        return Completion(text=text, usage=Usage(), latency_s=time.perf_counter() - start)


def reference_answer(instance: Instance) -> Any:
    """The recorded reference result: the ground truth itself when the one target is
    "answer" (the tools paradigm's tasks), else {target_key: ground truth}."""
    truths = {
        m.target_key: ground_truth(m.params)
        for m in instance.eval_config.metrics
        if has_ground_truth(m.params) and m.target_key != "full_text"
    }
    if set(truths) == {"answer"}:
        return truths["answer"]
    return truths


def execute_reply_for(project_root: Path, instance: Instance) -> str:
    """The first reply for one instance; ModelError when it has no usable reference."""
    reference = instance.reference
    if reference is None:
        raise ModelError(
            f"oracle: instance {instance.case_id} has no reference (no script to run)",
            infrastructure=False,
        )
    source = read_script(project_root, reference.script, reference.script_sha256, instance.case_id)
    return execute_reply(source, instance.sandbox_inputs(), reference.params)


def read_script(project_root: Path, relative: str, sha256: str, case_id: str) -> str:
    """The script source, checked to lie inside the project and to be the one that made the
    ground truth (an edited script would make the oracle disagree for no harness reason)."""
    root = Path(project_root).resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root):
        raise ModelError(
            f"oracle: {case_id}: reference.script {relative!r} lies outside the project",
            infrastructure=False,
        )
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ModelError(
            f"oracle: {case_id}: cannot read reference.script {relative!r}: {exc}",
            infrastructure=False,
        ) from exc
    actual = hashlib.sha256(raw).hexdigest()
    if sha256 and actual != sha256:
        raise ModelError(
            f"oracle: {case_id}: {relative} changed since its ground truth was generated "
            f"(sha256 {actual[:12]}, instance says {sha256[:12]}); "
            "regenerate with `eegbench truth`",
            infrastructure=False,
        )
    return raw.decode("utf-8")


def execute_reply(source: str, inputs: list[str], params: dict[str, Any]) -> str:
    """`<execute>` holding the script and a call that prints the result on a marker line."""
    trailer = (
        "\n# eegbench oracle: run the reference script on this instance's inputs\n"
        "import json as _eegbench_json\n"
        f"_eegbench_result = run({_py_literal(inputs)}, {_py_literal(params)})\n"
        f"print({RESULT_MARKER!r} + _eegbench_json.dumps(_eegbench_result, sort_keys=True))\n"
    )
    return "<execute>\n" + source.rstrip("\n") + "\n" + trailer + "</execute>"


def ensemble_types(instance: Instance) -> dict[str, str]:
    """Result key -> metric type of the instance's ensemble metrics (their script value is
    {pipeline: value})."""
    made = instance.reference.ensembles if instance.reference else None
    return {m.target_key: m.type for m in instance.eval_config.metrics if made and m.metric_id in made}


def solution_reply(observation: str, ensembles: dict[str, str] | None = None) -> str:
    """`<solution>` with the result found in the observation, or an account of its absence.
    Keys in `ensembles` (result key -> metric type) hold a method ensemble, reported as the one
    answer it stands for: the ground truth computed in the kernel, not read from the instance."""
    result, problem = find_result(observation)
    if problem is None:
        for key, metric_type in (ensembles or {}).items():
            if isinstance(result.get(key), dict):
                result[key] = consensus(metric_type, result[key])
        body = json.dumps(result, sort_keys=True, indent=2, ensure_ascii=False)
        return "<solution>\n```json\n" + body + "\n```\n</solution>"
    tail = observation[-TAIL_CHARS:].replace("</solution>", "</ solution>")
    return (
        f"<solution>\nThe reference script produced no result: {problem}.\n"
        f"End of its output:\n{tail}\n</solution>"
    )


def find_result(observation: str) -> tuple[Any, str | None]:
    """(result, None) from the last marker line, or (None, why not)."""
    lines = [line for line in observation.splitlines() if line.startswith(RESULT_MARKER)]
    if not lines:
        return None, f"no {RESULT_MARKER.strip()} line in the output (the script failed)"
    try:
        result = json.loads(lines[-1][len(RESULT_MARKER):])
    except json.JSONDecodeError as exc:
        return None, f"the {RESULT_MARKER.strip()} line is not valid JSON ({exc})"
    if not isinstance(result, dict):
        return None, f"the script returned a {type(result).__name__}, not a JSON object"
    return result, None


def _py_literal(value: Any) -> str:
    """A readable Python literal for JSON data; JSON text when repr would not round-trip
    (NaN, infinities)."""
    text = repr(value)
    try:
        if ast.literal_eval(text) == value:
            return text
    except (ValueError, SyntaxError):
        pass
    return f"_eegbench_json.loads({json.dumps(value)!r})"


def _last_user_text(messages: list[Message]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return message.get("content") or ""
    return ""


def build(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    """MODEL=oracle: the reference scripts' own answers, read from the project."""
    return OracleModel(env.paths.project_root)
