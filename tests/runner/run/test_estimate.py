"""The dry run's estimate: its arithmetic, its prices, and each paradigm's own first request."""
from __future__ import annotations

import pytest

from runner.benchmark import catalog
from runner.core.paths import Environment
from runner.core.settings import ControlLimits
from runner.models.base import prompt_tokens
from runner.paradigms import PARADIGMS, get_paradigm
from runner.run.estimate import Prices, Usage, estimate, grown
from validation.errors import UserError


@pytest.mark.parametrize(("first", "turns", "growth"), [(100, 1, 50), (100, 4, 50), (7, 10, 3), (0, 3, 0)])
def test_grown_is_the_sum_of_prompts_that_each_resend_the_last(first, turns, growth):
    assert grown(first, turns, growth) == sum(first + k * growth for k in range(turns))


def test_prices_parse_and_cost():
    prices = Prices.parse(" 2.5 , 10")
    assert (prices.input, prices.output) == (2.5, 10.0)
    assert Usage(calls=3, prompt_tokens=2_000_000, completion_tokens=100_000).cost(prices) == pytest.approx(6.0)


@pytest.mark.parametrize("text", ["2.5", "a,b", "1,2,3", "-1,2", "nan,1", ""])
def test_bad_prices_name_the_option(text):
    with pytest.raises(UserError, match="--prices"):
        Prices.parse(text)


@pytest.mark.parametrize("name", PARADIGMS.names())
def test_the_lower_bound_is_one_first_request_per_instance(name):
    data_root = Environment.from_os().paths.data_root
    instances = catalog.select(catalog.load_all(), ["fa_alpha_relpower-01", "pi_eog_blink_count-01"])
    paradigm = get_paradigm(name)
    controls = ControlLimits()
    found = estimate(paradigm, instances, controls, data_root, reply_tokens=1000, epochs=2)
    firsts = [paradigm.first_request(i, controls, data_root) for i in instances]
    assert found.first_prompt_tokens == {i.case_id: prompt_tokens(f.messages, f.tools) for i, f in zip(instances, firsts)}
    assert found.lower == Usage(4, 2 * sum(found.first_prompt_tokens.values()), 4)
    turns, growth = paradigm.typical_calls(controls, 1000)
    assert turns >= 2 and growth > 500 and found.typical.calls == 4 * turns
    assert found.typical.prompt_tokens > turns * found.lower.prompt_tokens
    assert all(f.messages[0]["role"] == "system" for f in firsts)
    assert bool(firsts[0].tools) == (name == "tools")  # only the tools loop sends schemas with its first call
