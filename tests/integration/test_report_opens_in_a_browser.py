"""`eegbench report --html` over two runs of 467 instances each, opened from disk in headless
Chromium. Every text a model controls in those runs (instructions, replies, code,
observations, reports, file names, errors, even the model's name) carries markup that would
run a script or break the page: the page must show it as text, run none of it, ask for
nothing over the network and log no console error, and its links and sorting must work."""
from __future__ import annotations

import re

import pytest

from runner.report.html_views import instance_anchor
from tests.browser import open_file
from tests.fixtures.synthetic_runs import PAYLOADS, make_run
from tests.integration.conftest import Eval

INSTANCES = 467


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    """The HTML report of two hostile 467-instance runs, written by the real command."""
    root = tmp_path_factory.mktemp("browser")
    runs = [make_run(root / "runs", "hostile-a", instances=INSTANCES, seed=1, xss=True),
            make_run(root / "runs", "hostile-b", model="model-b", paradigm="tools", instances=INSTANCES, seed=2,
                     xss=True)]
    out = root / "report.html"
    done = Eval(root / "runs")("report", "hostile-a", "hostile-b", "--html", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    return out, runs


def open_instance_table(page):
    """Unfold the long table of every instance run and return it."""
    table = page.locator("table.sortable").filter(has=page.locator("th", has_text="unit scores"))
    page.locator("details", has=table).locator("> summary").click()
    return table


def test_the_report_opens_with_no_error_and_runs_no_injected_script(page_file, tmp_path):
    out, _ = page_file
    opened = open_file(out, tmp_path / "top.png")
    assert opened.console_errors == [] and opened.errors == []
    assert opened.requests == []  # self-contained: nothing fetched, not even a font
    assert opened.xss is False and opened.title != "XSS"
    assert opened.title.startswith("eegbench report: model-a <script>")  # the model name, as text
    assert PAYLOADS[0] in opened.text  # the leaderboard names the model: markup shown, not run
    assert "Leaderboard: mean score per subset" in opened.text
    assert opened.screenshot.read_bytes().startswith(b"\x89PNG")


def test_an_instance_link_opens_that_instance_with_its_hostile_texts_as_text(page_file, tmp_path):
    out, runs = page_file
    row = runs[0].rows[0]
    anchor = instance_anchor(runs[0].run_id, row.case_id, row.epoch)

    def follow(page):
        instances = open_instance_table(page)
        instances.locator(f'a[href="#{anchor}"]').first.click()
        page.wait_for_function("(id) => document.getElementById(id).open", arg=anchor)
        target = page.locator(f"#{anchor}")
        target.locator("details").evaluate_all("nodes => nodes.forEach(n => n.open = true)")
        return target.inner_text()

    opened = open_file(out, tmp_path / "instance.png", act=follow)
    shown = opened.results[0]
    assert isinstance(shown, str) and row.case_id in shown
    for payload in PAYLOADS:
        assert payload in shown  # instruction, reply, code, observation and report carry them
    assert "<img src=x onerror=alert(1)>.txt" in shown  # a retained file named like markup
    assert opened.xss is False and opened.console_errors == [] and opened.errors == []


def test_clicking_a_column_header_sorts_the_table(page_file, tmp_path):
    out, _ = page_file

    def sort_by_score(page):
        instances = open_instance_table(page)
        header = instances.locator("th").filter(has_text=re.compile(r"^score$"))
        column = header.evaluate("th => th.cellIndex")
        header.click()
        return instances.locator("tbody tr").evaluate_all(
            "(rows, i) => rows.map(r => r.cells[i].getAttribute('data-v'))", column)

    opened = open_file(out, tmp_path / "sorted.png", act=sort_by_score)
    values = opened.results[0]
    numbers = [float(v) for v in values if v]
    assert len(values) == 2 * INSTANCES
    assert numbers == sorted(numbers) and len(set(numbers)) > 2
    assert values[len(numbers):] == [""] * (len(values) - len(numbers))  # unscored (infra_error) last
    assert opened.console_errors == [] and opened.errors == []
