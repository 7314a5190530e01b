"""BrainAgent's model calls pass the shared token ceiling too (no kernel needed: the
supervisor's replies never delegate)."""
from types import SimpleNamespace

from runner.core.settings import ControlLimits
from runner.core.transcript import Usage
from runner.models.base import Completion, ModelSession
from runner.paradigms.brainagent.loop import BrainAgentLoop
from tests.runner.paradigms.test_codeact import make_instance


class Talker(ModelSession):
    def __init__(self) -> None:
        self.calls = 0

    def complete(self, messages):
        self.calls += 1
        return Completion("I will think about it.", Usage(prompt_tokens=900, completion_tokens=100), 0.0)


def test_the_supervisor_stops_at_the_instance_token_ceiling():
    session = Talker()
    loop = BrainAgentLoop(make_instance(), session, SimpleNamespace(), ControlLimits(max_instance_tokens=1500))
    outcome = loop.run()
    assert outcome.status == "token_limit" and session.calls == 2  # 1000, 2000: the third call is not made
    assert [t.usage.prompt_tokens for t in outcome.turns] == [900, 900]
