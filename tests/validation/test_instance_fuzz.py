"""Fuzzed instance files: real instance JSON, mutated (keys dropped, types changed, random JSON
put at random paths, text truncated or made non-UTF-8), must load or fail with InstanceError
naming the file and a field path (or, for text that is not JSON, the file and the line).
Any other exception is a loader bug: a user would see a traceback."""
from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner.benchmark import catalog
from validation.errors import InstanceError
from validation.instance import load_instance

FIELD = re.compile(r"field '([^']+)'")
NOT_JSON = ("not valid JSON (line ", "not UTF-8 text", "empty file", "expected a JSON object")
FUZZ = settings(max_examples=250, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

Path_ = tuple[str | int, ...]


def seed_instances() -> list[dict[str, Any]]:
    """One real instance file per metric type and per subset: every unit's params get fuzzed."""
    chosen: dict[str, dict[str, Any]] = {}
    for path in catalog.instance_files():
        raw = json.loads(path.read_text())
        kinds = [m["type"] for m in raw["eval_config"]["metrics"]] + [raw["meta_info"]["bench_subset"]]
        for kind in kinds:
            chosen.setdefault(kind, raw)
    seeds = list({json.dumps(r, sort_keys=True): r for r in chosen.values()}.values())
    assert len(seeds) >= 8, "expected real instance files covering the metric types"
    return seeds


SEEDS = seed_instances()
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8,
)


def paths(value: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every path into a JSON value (the root excluded)."""
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        yield prefix + (key,)
        yield from paths(child, prefix + (key,))


def parent_of(doc: Any, path: Path_) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


def other_type(value: Any) -> st.SearchStrategy[Any]:
    """A value of another JSON type than `value` (bool is its own type, not a number)."""
    kinds = {"null": st.none(), "bool": st.booleans(), "number": st.integers(-5, 5) | st.floats(-1e9, 1e9),
             "string": st.text(max_size=6), "list": st.lists(st.integers(), max_size=2),
             "object": st.dictionaries(st.text(max_size=4), st.integers(), max_size=2)}
    mine = ("null" if value is None else "bool" if isinstance(value, bool) else
            "number" if isinstance(value, (int, float)) else "string" if isinstance(value, str) else
            "list" if isinstance(value, list) else "object")
    return st.one_of(*(s for k, s in kinds.items() if k != mine))


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    """A real instance with 1-3 mutations at random paths."""
    doc = json.loads(json.dumps(draw(st.sampled_from(SEEDS))))
    for _ in range(draw(st.integers(1, 3))):
        where = list(paths(doc))
        # Half the mutations go into metric params, where each unit's own checks must hold:
        # uniform choice would mostly hit the few shallow keys.
        in_params = [p for p in where if "params" in p[:4] and p[0] == "eval_config"]
        if draw(st.booleans()) and in_params:
            where = in_params
        if not where:
            break
        path = draw(st.sampled_from(where))
        parent, key = parent_of(doc, path), path[-1]
        action = draw(st.sampled_from(["drop", "retype", "random"]))
        if action == "drop":
            del parent[key]
        elif action == "retype":
            parent[key] = draw(other_type(parent[key]))
        else:
            parent[key] = draw(json_values)
    return doc


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="instance-fuzz-") as name:
        yield Path(name)


def check_loads_or_names_field(path: Path, *, json_text: bool) -> None:
    """The contract: an Instance, or InstanceError "<file>: ... field '<path>' ..."."""
    try:
        load_instance(path)
    except InstanceError as exc:
        message = str(exc)
        assert message.startswith(f"{path}: "), message
        if json_text:
            assert FIELD.search(message) or message.startswith(f"{path}: expected a JSON object"), message
        else:
            assert FIELD.search(message) or any(m in message for m in NOT_JSON), message


@FUZZ
@given(doc=mutated())
def test_mutated_instance_loads_or_names_the_field(folder, doc):
    path = folder / "mutated.json"
    path.write_text(json.dumps(doc))
    check_loads_or_names_field(path, json_text=True)


@FUZZ
@given(seed=st.sampled_from(SEEDS), cut=st.floats(0, 1), junk=st.binary(max_size=3))
def test_truncated_or_garbled_text_names_the_file_and_line(folder, seed, cut, junk):
    text = json.dumps(seed, indent=1).encode()
    path = folder / "truncated.json"
    path.write_bytes(text[: int(len(text) * cut)] + junk)
    check_loads_or_names_field(path, json_text=False)


def test_an_unfuzzed_seed_loads(folder):
    """The seeds themselves are valid: a mutation is what makes a file fail."""
    for i, seed in enumerate(SEEDS):
        path = folder / f"seed{i}.json"
        path.write_text(json.dumps(seed))
        assert load_instance(path).case_id == seed["meta_info"]["case_id"]


def test_the_error_names_the_mutated_field(folder):
    """A concrete mutation: the message is the one a user would act on."""
    doc = json.loads(json.dumps(SEEDS[0]))
    doc["eval_config"]["metrics"][0]["weight"] = "heavy"
    path = folder / "weight.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InstanceError) as caught:
        load_instance(path)
    assert str(caught.value) == f"{path}: field 'eval_config.metrics[0].weight': expected a number, got 'heavy'"


# Every enumerated field of an instance (or case) file: an unknown value is refused at load,
# naming the file, the field and the value.
ENUMERATED = [
    (("meta_info", "bench_subset"), "Sleep assessment"),
    (("meta_info", "bench_subset"), "[bold]Sleep Assessment[/bold]"),
    (("meta_info", "difficulty"), "trivial"),
    (("meta_info", "kind"), "guided"),
    (("eval_config", "metrics", 0, "type"), "numeric_tolerance_typo"),
]


@pytest.mark.parametrize(("where", "value"), ENUMERATED)
def test_an_unknown_enumerated_value_is_refused_naming_the_field(folder, where, value):
    doc = json.loads(json.dumps(SEEDS[0]))
    parent_of(doc, where)[where[-1]] = value
    path = folder / "enumerated.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InstanceError) as refused:
        load_instance(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: ") and FIELD.search(message), message
    assert FIELD.search(message).group(1).replace("[", ".").replace("]", "") == ".".join(map(str, where)), message
    assert value in message, message
