"""MODEL=human's reading of a reply: blocks end at their closing tag, JSON at an empty line,
a reply without an action is refused, an end of input or a stopping run ends the wait."""
from __future__ import annotations

import io
import os
import threading
import time

import pytest

from runner.models.base import ModelError
from runner.models.human import NO_ACTION, HumanModel
from validation.instance import Instance

MESSAGES = [{"role": "system", "content": "You are an analyst."}, {"role": "user", "content": "Find alpha."}]


def instance() -> Instance:
    return Instance.model_validate({
        "meta_info": {"case_id": "fa_x-01", "bench_subset": "Foundational Analysis"},
        "agent_input": {"data_path": "a.edf", "instruction": "Find alpha."},
        "eval_config": {"metrics": []},
    })


def typed(text: str | None) -> tuple[HumanModel, io.StringIO]:
    """A model reading `text` from a pipe (None: the pipe stays open, nothing is typed)."""
    read, write = os.pipe()
    if text is not None:
        os.write(write, text.encode())
        os.close(write)
    shown = io.StringIO()
    return HumanModel(stdin=os.fdopen(read), stdout=shown), shown


def test_a_block_ends_at_its_closing_tag_and_may_hold_empty_lines():
    model, shown = typed("\n<execute>\nx = 1\n\nprint(x)\n</execute>\nnot read\n")
    completion = model.session(instance()).complete(MESSAGES)
    assert completion.text == "<execute>\nx = 1\n\nprint(x)\n</execute>"
    assert "── instructions ──\nYou are an analyst." in shown.getvalue() and "── fa_x-01 ──\nFind alpha." in shown.getvalue()


def test_a_reply_without_an_action_is_refused_and_asked_again():
    model, shown = typed("about 0.3\n\n{\"action\": \"final_answer\",\n \"answer\": 3}\n\n")
    completion = model.session(instance()).complete(MESSAGES)
    assert completion.text == '{"action": "final_answer",\n "answer": 3}'
    assert shown.getvalue().count(NO_ACTION) == 1 and shown.getvalue().count("your reply (fa_x-01, turn 1)") == 2


def test_later_turns_show_only_the_new_messages():
    model, shown = typed("<solution>a</solution>\n<solution>b</solution>\n")
    session = model.session(instance())
    session.complete(MESSAGES)
    session.complete(MESSAGES + [{"role": "assistant", "content": "<solution>a</solution>"},
                                 {"role": "user", "content": "Observation: 42"}])
    assert shown.getvalue().count("You are an analyst.") == 1 and "── fa_x-01 ──\nObservation: 42" in shown.getvalue()
    assert "── you ──" not in shown.getvalue()  # the person's own reply is not echoed back


def test_an_end_of_input_ends_the_instance_as_an_infrastructure_failure():
    model, _ = typed("<execute>\nunfinished\n")
    with pytest.raises(ModelError, match="end of input at fa_x-01") as caught:
        model.session(instance()).complete(MESSAGES)
    assert caught.value.kind == "harness"  # infra_error: never scored, retried on resume


def test_closing_the_model_ends_a_wait_for_input():
    model, _ = typed(None)
    threading.Timer(0.3, model.close).start()
    started = time.monotonic()
    with pytest.raises(ModelError, match="stopping"):
        model.session(instance()).complete(MESSAGES)
    assert time.monotonic() - started < 5
