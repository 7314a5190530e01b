"""The constant model answers every instance with its task's best constant (runner/models/constant.py)."""
import json

from runner.models.constant import ConstantModel
from tests.validation.test_baseline import categorical, make, numeric


def test_each_instance_gets_its_tasks_best_constant_in_both_answer_forms():
    labels = [make(f"{i}", [categorical(x, ["a", "b", "c"])]) for i, x in enumerate("abbcb")]
    values = [make(f"{i}", [numeric(v, tolerance=0.5)], task="fa_y") for i, v in enumerate([1.0, 5.0, 5.4, 9.0])]
    model = ConstantModel(labels + values)
    assert model.answer(labels[0]) == {"label": "b"}  # the most frequent label, whatever the case's own
    assert model.answer(values[3]) == {"value": 5.0}  # hits two of four within 0.5 (5.4 also would: first kept)
    reply = model.session(labels[0]).complete([]).text
    assert reply.startswith("<solution>") and json.loads(reply.split("```json")[1].split("```")[0]) == {"label": "b"}
    tool = json.loads(model.session(values[0]).complete_with_tools([], []).text)
    assert tool == {"action": "final_answer", "answer": {"value": 5.0}}
    unknown = make("01", [categorical("a", ["a", "b"])], task="fa_unknown")
    assert model.session(unknown).complete([]).text == "<solution></solution>"
