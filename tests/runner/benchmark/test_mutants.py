"""Mutant files: their format, their errors, and that every committed one applies to its script."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.benchmark import mutants, truth
from runner.benchmark.mutants import Change, Mutant, MutantError, load_mutants, mutant_source

PROJECT_ROOT = Path(__file__).resolve().parents[3]
SCRIPT = "def run(inputs, params):\n    x = load() * 1e6\n    y = x * 1e6\n    return {'v': x}\n"


def _write(root: Path, task: str, text: str) -> None:
    folder = root / mutants.MUTANTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{task}.toml").write_text(text)


def _mutant(*changes: Change) -> Mutant:
    return Mutant(name="m", mistake="unit", why="forgets the microvolt scale", change=list(changes))


def test_a_mutant_file_loads_with_its_changes(tmp_path):
    _write(tmp_path, "fa_x", """
[[mutant]]
name = "volts"
mistake = "unit"
why = "forgets to scale volts to microvolts"
[[mutant.change]]
old = "load() * 1e6"
new = "load()"
""")
    [found] = load_mutants(tmp_path, "fa_x")
    assert (found.name, found.mistake, found.change[0].count) == ("volts", "unit", 1)


def test_a_task_without_a_mutant_file_has_no_mutants(tmp_path):
    assert load_mutants(tmp_path, "fa_x") == []


@pytest.mark.parametrize("body, field", [
    ('name = "a"\nmistake = "typo"\nwhy = "a long enough reason"\n[[mutant.change]]\nold = "x"\nnew = "y"', "mistake"),
    ('name = "A b"\nmistake = "unit"\nwhy = "a long enough reason"\n[[mutant.change]]\nold = "x"\nnew = "y"', "name"),
    ('name = "a"\nmistake = "unit"\nwhy = "short"\n[[mutant.change]]\nold = "x"\nnew = "y"', "why"),
    ('name = "a"\nmistake = "unit"\nwhy = "a long enough reason"', "change"),
    ('name = "a"\nmistake = "unit"\nwhy = "a long enough reason"\n[[mutant.change]]\nold = "x"\nnew = "x"', "change"),
    ('name = "a"\nmistake = "unit"\nwhy = "a long enough reason"\nseverity = 3\n'
     '[[mutant.change]]\nold = "x"\nnew = "y"', "severity"),
])
def test_a_bad_mutant_is_refused_naming_the_file_and_field(tmp_path, body, field):
    _write(tmp_path, "fa_x", "[[mutant]]\n" + body + "\n")
    with pytest.raises(MutantError) as caught:
        load_mutants(tmp_path, "fa_x")
    assert "fa_x.toml" in str(caught.value) and field in str(caught.value)


def test_repeated_names_and_bad_toml_are_refused(tmp_path):
    one = '[[mutant]]\nname = "a"\nmistake = "unit"\nwhy = "a long enough reason"\n[[mutant.change]]\nold = "x"\nnew = "y"\n'
    _write(tmp_path, "fa_x", one + one)
    with pytest.raises(MutantError, match="repeated: a"):
        load_mutants(tmp_path, "fa_x")
    _write(tmp_path, "fa_x", "[[mutant]\n")
    with pytest.raises(MutantError, match="not valid TOML"):
        load_mutants(tmp_path, "fa_x")


def test_changes_apply_in_order():
    text = mutant_source("fa_x", _mutant(Change(old="load() * 1e6", new="load()")), SCRIPT)
    assert "x = load()\n" in text and "y = x * 1e6" in text


def test_a_change_must_match_its_count_exactly():
    with pytest.raises(MutantError, match=r"fa_x: mutant m: change 0 expects 1 occurrence.*found 2"):
        mutant_source("fa_x", _mutant(Change(old="* 1e6", new="")), SCRIPT)
    both = mutant_source("fa_x", _mutant(Change(old="* 1e6", new="* 1e3", count=2)), SCRIPT)
    assert both.count("1e3") == 2 and "1e6" not in both
    with pytest.raises(MutantError, match="found 0"):
        mutant_source("fa_x", _mutant(Change(old="not in the script", new="")), SCRIPT)


def test_every_committed_mutant_applies_to_its_tasks_script():
    tasks = mutants.tasks_with_mutants(PROJECT_ROOT)
    assert tasks, "no mutant file under reference_scripts/mutants/"
    for task_id in tasks:
        task = truth.load_task(PROJECT_ROOT / truth.TASKS_DIR / f"{task_id}.json")
        script = (PROJECT_ROOT / task.script).read_text()
        found = load_mutants(PROJECT_ROOT, task_id)
        assert len(found) >= mutants.MIN_MUTANTS, f"{task_id}: {len(found)} mutants"
        sources = {mutant_source(task_id, m, script) for m in found}
        assert len(sources) == len(found), f"{task_id}: two mutants make the same script"
