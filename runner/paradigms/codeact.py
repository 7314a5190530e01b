"""The CodeAct loop: one action per turn, code in the instance's kernel, controls enforced.

The loop owns no resources: the scheduler starts the sandbox and the model session and
hands them in, so every way the loop can end leaves teardown to one place.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from runner.core.settings import ControlLimits
from runner.core.transcript import Observation, Turn
from runner.models.base import Completion, Message, ModelSession
from runner.paradigms import prompts
from runner.paradigms.actions import parse_action
from runner.paradigms.base import Episode, FirstRequest, Paradigm
from runner.paradigms.loop import InstanceOutcome, TurnLoop, sha256_text
from runner.paradigms.loop import Stop as _Stop
from runner.sandbox.base import Sandbox, SandboxError
from validation.instance import Instance


def error_fingerprint(obs: Observation) -> str | None:
    """Same failure, different numbers: digits and addresses removed before hashing."""
    if obs.status == "ok":
        return None
    detail = f"{obs.status}:{obs.error_name or ''}:{obs.error_value or ''}"
    return sha256_text(re.sub(r"0x[0-9a-f]+|\d+", "#", detail))


def first_messages(system_prompt: str, instance: Instance) -> list[Message]:
    """The conversation a CodeAct instance starts with."""
    return [{"role": "system", "content": system_prompt}, {"role": "user", "content": prompts.instance_message(instance)}]


class CodeActLoop(TurnLoop):
    """One instance under the CodeAct controls: rounds, repeats, missing actions, deadline."""

    def __init__(
        self,
        instance: Instance,
        session: ModelSession,
        sandbox: Sandbox,
        controls: ControlLimits,
        *,
        system_prompt: str = prompts.SYSTEM_PROMPT,
        **hooks: Any,
    ) -> None:
        super().__init__(instance, session, controls, first_messages(system_prompt, instance), **hooks)
        self.sandbox = sandbox
        self.code_counts: Counter[str] = Counter()
        self.error_counts: Counter[str] = Counter()
        self.no_action = 0

    def _round(self, index: int, final: bool) -> InstanceOutcome | None:
        self._check_time()
        if final:
            self.messages.append({"role": "user", "content": prompts.FINAL_ROUND})
        completion = self._complete()
        action = parse_action(completion.text)
        turn = Turn(
            index=index,
            reply=completion.text,
            usage=completion.usage,
            latency_s=round(completion.latency_s, 4),
            action=action.kind,
            note="final round" if final else None,
        )
        self.messages.append({"role": "assistant", "content": completion.text})
        if action.kind == "solution":
            self._record(turn)
            return self._end("forced_solution" if final else "solution", action.body)
        if final:
            self._record(turn)
            return self._end("max_rounds", None)
        if action.kind == "none":
            return self._no_action(turn)
        self._execute(turn, action.body)
        return None

    def _complete(self) -> Completion:
        return self._model_call(lambda: self.session.complete(list(self.messages)))

    def _no_action(self, turn: Turn) -> InstanceOutcome | None:
        self.no_action += 1
        turn.note = f"no action ({self.no_action}/{self.controls.max_no_action})"
        self._record(turn)
        if self.no_action >= self.controls.max_no_action:
            return self._end("missing_action", None)
        self.messages.append({"role": "user", "content": prompts.NO_ACTION})
        return None

    def _execute(self, turn: Turn, code: str) -> None:
        turn.code = code
        turn.code_sha256 = sha256_text(code)
        try:
            obs = self.sandbox.execute(code, timeout_s=self.time_left())
        except SandboxError as exc:
            self._record(turn)
            self._event("sandbox_failure", str(exc), turn.index)
            raise _Stop("infra_error", f"sandbox error: {exc}") from exc
        turn.observation = obs
        self._record(turn)
        if obs.restarted:
            self._event("kernel_restart", f"after a {obs.status} execution", turn.index)
        self.messages.append({"role": "user", "content": prompts.observation_message(obs.text)})
        self._check_repeats(turn.code_sha256, error_fingerprint(obs))

    def _check_repeats(self, code_sha: str, fingerprint: str | None) -> None:
        self.code_counts[code_sha] += 1
        if self.code_counts[code_sha] >= self.controls.repeat_limit:
            raise _Stop("repeated_failure", f"same code run {self.code_counts[code_sha]} times")
        if fingerprint is None:
            return
        self.error_counts[fingerprint] += 1
        if self.error_counts[fingerprint] >= self.controls.repeat_limit:
            raise _Stop("repeated_failure", f"same error {self.error_counts[fingerprint]} times")


class CodeAct(Paradigm):
    """BrainBench's CodeAct: one <execute> or <solution> action per turn, code in the kernel."""

    name = "codeact"
    system_prompt = prompts.SYSTEM_PROMPT

    def run(self, episode: Episode) -> InstanceOutcome:
        """The CodeAct loop in the episode's sandbox."""
        if episode.sandbox is None:
            raise ValueError(f"{episode.instance.case_id}: the {self.name} paradigm needs a sandbox")
        return CodeActLoop(
            episode.instance, episode.session, episode.sandbox, episode.controls,
            system_prompt=self.system_prompt, should_stop=episode.should_stop, on_turn=episode.on_turn,
            on_event=episode.on_event,
        ).run()

    def first_request(self, instance: Instance, controls: ControlLimits, data_root: Path) -> FirstRequest:
        """The system prompt and the instance message; no tool schemas."""
        return FirstRequest(first_messages(self.system_prompt, instance))
