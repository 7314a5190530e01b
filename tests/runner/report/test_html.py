"""The HTML report: self-contained, everything from a model escaped, numbers formatted by
column kind, every instance link landing on an instance of the browser.

The runs come from tests/fixtures/synthetic_runs.py; `make_report` builds a Report with
hand-made tables in the column layout the sections write (runner/report/sections/), so the
page is tested apart from the statistics. The browser test is
tests/integration/test_report_opens_in_a_browser.py.
"""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from runner.core.config import RunConfig
from runner.report import html as html_module
from runner.report.figures import all_figures
from runner.report.format import format_cell as shared_format
from runner.report.html import render_html, write_html
from runner.report.html_views import MAX_OBSERVATION, format_cell, instance_anchor, run_anchor
from runner.report.model import Column, Figure, Report, ReportTable
from runner.report.rows import RunData, load_run
from runner.run.store import RunStore
from tests.fixtures.synthetic_runs import PAYLOADS, SUBSETS, XSS, make_run


def make_report(runs: list[RunData], *, xss: bool = False, figures: bool = True) -> Report:
    """A Report over `runs` with tables in the contract's column layout and every figure the
    data allows."""
    text = XSS if xss else "note"
    report = Report(title="eegbench report" + (f" {PAYLOADS[1]}" if xss else ""), runs=[r.info for r in runs],
                    warnings=([f"instance set differs (a: x; b: {text})", f"a data warning {text}"]),
                    settings={"seed": 0, "resamples": 2000})
    configs = [(r.info.model, r.info.paradigm) for r in runs]
    report.add(ReportTable(
        name="leaderboard", title="Leaderboard", section="Leaderboard",
        columns=[Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
                 Column(key="instances", title="instance runs", kind="int"),
                 Column(key="mean_overall", title="overall", kind="estimate")],
        rows=[{"model": m, "paradigm": p, "instances": 1234, "mean_overall": {"value": 72.14, "low": 65.0,
                                                                             "high": 79.349}} for m, p in configs],
        notes=[f"A note {text}"]))
    report.add(ReportTable(
        name="paired", title="Paired comparison", section="Leaderboard",
        columns=[Column(key="a", title="a"), Column(key="b", title="b"), Column(key="share", title="share", kind="share"),
                 Column(key="sign_p", title="sign p", kind="p"), Column(key="wilcoxon_p", title="W p", kind="p"),
                 Column(key="money", title="cost", kind="money"), Column(key="seconds", title="time", kind="seconds"),
                 Column(key="delta", title="delta", kind="float"), Column(key="missing", title="missing", kind="score")],
        rows=[{"a": "x", "b": "y", "share": 0.125, "sign_p": 0.0321, "wilcoxon_p": 0.00001, "money": 1.234,
               "seconds": 12.345, "delta": -3.14159, "missing": None}]))
    report.add(ReportTable(
        name="units", title="Validation units", section="Validation units",
        columns=[Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
                 Column(key="family", title="family"), Column(key="mean", title="mean", kind="score"),
                 Column(key="units", title="units", kind="int")],
        rows=[{"model": m, "paradigm": p, "family": f, "mean": 40 + 10 * i + 7 * j, "units": 10}
              for i, (m, p) in enumerate(configs) for j, f in enumerate(("numeric", "sequence", "artifact"))]))
    report.add(ReportTable(
        name="stability", title="Stability", section="Stability",
        columns=[Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
                 Column(key="subset", title="subset"), Column(key="task", title="task"),
                 Column(key="mpad", title="MPAD", kind="float")],
        rows=[{"model": m, "paradigm": p, "subset": s, "task": t, "mpad": 5.0 + len(t) + 3 * i}
              for i, (m, p) in enumerate(configs) for s, names in SUBSETS.items() for t in names]))
    report.add(_instances_table(runs, text))
    report.add(_flips_table(runs))
    report.add(ReportTable(
        name="t2_confusion", title="T2 confusion", section="EEGAgentBench",
        columns=[Column(key="run", title="run"), Column(key="label", title="label"), Column(key="true", title="true"),
                 Column(key="predicted", title="predicted"), Column(key="count", title="count", kind="int")],
        rows=[{"run": r.run_id, "label": r.info.label, "true": t, "predicted": p, "count": 10 if t == p else 2}
              for r in runs for t in ("clean", "ocular", "muscle") for p in ("clean", "ocular", "muscle", None)]))
    report.add(ReportTable(
        name="t5_alarms", title="T5 alarms", section="EEGAgentBench",
        columns=[Column(key="label", title="label"), Column(key="miss_rate", title="miss", kind="share"),
                 Column(key="over_alarm_rate", title="over-alarm", kind="share")],
        rows=[{"label": r.info.label, "miss_rate": 0.2 + 0.1 * i, "over_alarm_rate": 0.3 - 0.1 * i}
              for i, r in enumerate(runs)]))
    if figures:
        for figure in all_figures(report, runs):
            report.add(figure)
    return report


def _instances_table(runs: list[RunData], text: str) -> ReportTable:
    rows = [{"run_id": r.run_id, "case_id": row.case_id, "epoch": row.epoch, "task_id": row.task_id,
             "subset": row.subset, "status": row.status, "score": row.score, "note": text}
            for r in runs for row in r.rows]
    return ReportTable(
        name="instances", title="All instance runs", section="Instances table",
        columns=[Column(key="run_id", title="run"), Column(key="case_id", title="case"),
                 Column(key="epoch", title="epoch", kind="int"), Column(key="task_id", title="task"),
                 Column(key="subset", title="subset"), Column(key="status", title="status"),
                 Column(key="score", title="score", kind="score"), Column(key="note", title="note")],
        rows=rows)


def _flips_table(runs: list[RunData]) -> ReportTable:
    a, b = runs[0], runs[-1]
    shared = sorted({r.case_id for r in a.rows} & {r.case_id for r in b.rows})[:5]
    return ReportTable(
        name="flips", title="Flips", section="Leaderboard",
        columns=[Column(key=k, title=k, kind="score" if k.startswith("score") else "text")
                 for k in ("a", "b", "case_id", "run_a", "run_b", "score_a", "score_b")],
        rows=[{"a": a.info.label, "b": b.info.label, "case_id": c, "epoch": 1, "run_a": a.run_id, "run_b": b.run_id,
               "score_a": 100.0, "score_b": 0.0} for c in shared])


# --- reading the page back --------------------------------------------------------------------

class Page(HTMLParser):
    """Every start tag with its attributes, the ids, and the text of <script> elements."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ids: set[str] = set()
        self.scripts: list[str] = []
        self._in_script = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if attributes.get("id"):
            self.ids.add(str(attributes["id"]))
        if tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]

    def hrefs(self) -> list[str]:
        return [str(attrs["href"]) for _, attrs in self.tags if attrs.get("href") is not None]


def assert_self_contained_and_inert(html: str) -> Page:
    """No external resource, exactly our one inline script, no event handler anywhere, every
    internal link lands on an id of the page."""
    page = Page(html)
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    assert not page.named("link") and not page.named("iframe") and not page.named("object")
    assert not page.named("embed") and not page.named("base")
    assert len(page.named("script")) == 1 and page.named("script")[0].get("src") is None
    assert "window.__xss" not in page.scripts[0]
    for _, attrs in page.tags:
        assert not [a for a in attrs if a.lower().startswith("on")], attrs
    for img in page.named("img"):
        assert str(img.get("src")).startswith("data:image/"), img
    for href in page.hrefs():
        assert href.startswith("#"), href
        assert href[1:] in page.ids, f"link to a missing anchor {href}"
    assert any(m.get("http-equiv") == "Content-Security-Policy" for m in page.named("meta"))
    return page


# --- tests ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, list[RunData], str]:
    """Two runs whose every model-controlled text carries the payloads, rendered once."""
    root = tmp_path_factory.mktemp("hostile")
    runs = [make_run(root, "run-a", instances=14, seed=1, xss=True),
            make_run(root, "run-b", model="model-b", paradigm="tools", instances=14, seed=2, xss=True)]
    report = make_report(runs, xss=True)
    return report, runs, render_html(report, runs, credits=f"Data from PhysioNet. {PAYLOADS[2]}")


def test_the_page_is_self_contained_and_runs_nothing_a_model_wrote(hostile):
    _, _, html = hostile
    assert_self_contained_and_inert(html)
    assert "<b id=broken>" not in html and "<b id=\"broken\">" not in html


def test_every_payload_is_shown_as_text(hostile):
    _, _, html = hostile
    for payload in PAYLOADS:
        escaped = payload.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert escaped.replace('"', "&#34;").replace("'", "&#39;") in html or escaped in html, payload
        assert payload not in html
    page = Page(html)
    assert len(page.named("table")) == html.count("</table>")  # no table closed by a report


def test_model_made_svg_is_never_inlined_and_hostile_names_are_text(hostile):
    _, _, html = hostile
    assert 'onload="window.__xss' not in html
    assert "data:image/svg+xml;base64," in html  # shown through <img>, which runs no script
    assert "&lt;img src=x onerror=alert(1)&gt;.txt" in html
    assert "not retained: symlink" in html


def test_every_instance_link_lands_on_an_instance_and_every_instance_is_there(hostile):
    _, runs, html = hostile
    page = Page(html)
    for run in runs:
        for row in run.rows:
            assert instance_anchor(run.run_id, row.case_id, row.epoch) in page.ids
        assert run_anchor(run.run_id) in page.ids
    links = [h for h in page.hrefs() if h.startswith("#i-")]
    assert len(links) >= sum(len(r.rows) for r in runs)  # the instances table links every row
    assert f'href="#{instance_anchor("run-b", runs[1].rows[0].case_id)}"' in html  # a flips row's run_b side


def test_anchor_ids_are_safe_and_distinct():
    a = instance_anchor("run.1", "case/..<x>", 2)
    assert re.fullmatch(r"[a-z0-9_-]+", a)
    assert a != instance_anchor("run_1", "case/..<x>", 2)
    assert instance_anchor("r", "c", 1) != instance_anchor("r", "c", 2)


@pytest.mark.parametrize(("value", "kind", "shown"), [
    (72.14, "score", "72.1"), (0.125, "share", "12.5%"), (1234, "int", "1,234"),
    ({"value": 72.14, "low": 65.0, "high": 79.349}, "estimate", "72.1 [65.0, 79.3]"),
    ({"value": 50.0, "low": None, "high": None}, "estimate", "50.0"), ({"value": None}, "estimate", "–"),
    (0.0321, "p", "0.032"), (1e-5, "p", "<0.001"), (None, "score", "–"), (None, "estimate", "–"),
    (float("nan"), "float", "–"), (float("inf"), "score", "–"), ("abc", "text", "abc"), ("n/a", "score", "n/a"),
])
def test_numbers_are_formatted_by_column_kind(value, kind, shown):
    assert format_cell(value, kind) == shown


@pytest.mark.parametrize(("value", "kind"), [(-3.14159, "float"), (1.234, "money"), (12.345, "seconds"),
                                             (5000.0, "seconds"), (3, "int")])
def test_the_page_writes_numbers_as_the_terminal_does(value, kind):
    assert format_cell(value, kind) == shared_format(value, kind)


def test_tables_show_formatted_right_aligned_numbers_and_notes(hostile):
    _, _, html = hostile
    assert re.search(r'<td class="num" data-v="72.14">72.1 \[65.0, 79.3\]</td>', html)
    for shown in (">12.5%<", ">0.032<", "&lt;0.001<", ">$1.23<", ">12.3 s<", ">1,234<"):
        assert shown in html, shown
    assert '<td class="num" data-v="">–</td>' in html
    assert "A note &lt;script&gt;" in html


def test_comparability_warnings_come_first_and_long_tables_fold(hostile, monkeypatch):
    report, runs, html = hostile
    assert html.index("not measured alike") < html.index("a data warning") < html.index('id="s1-')
    assert "rows (show)" not in html
    monkeypatch.setattr(html_module, "COLLAPSE_ROWS", 10)
    instances = report.table("instances")
    assert instances is not None and len(instances.rows) > 10
    assert f"{len(instances.rows)} rows (show)" in render_html(report, runs)


def test_provenance_cards_and_credits(hostile):
    report, _, html = hostile
    for info in report.runs:
        assert f'id="{run_anchor(info.run_id)}"' in html
    for fact in ("abc123", "f" * 64, "1.13.2", "instance-set hash", "controls", "Data from PhysioNet."):
        assert fact in html, fact
    assert '<pre class="credits">Data from PhysioNet. &lt;/table&gt;' in html


def test_figures_are_inlined_svg_without_external_references(hostile):
    report, _, html = hostile
    assert {f.name for f in report.figures} >= {"score_distribution", "unit_families", "mpad", "tokens_pareto",
                                                  "t2_confusion", "t5_alarms", "t6_hypnograms", "difficulty"}
    assert html.count("<svg") >= len(report.figures)
    assert "<!DOCTYPE svg" not in html and "<metadata>" not in html


def test_a_figure_with_active_content_is_shown_as_an_image_not_markup(tmp_path):
    runs = [make_run(tmp_path, "r", instances=2)]
    report = make_report(runs, figures=False)
    report.add(Figure(name="evil", title="evil", section="Leaderboard",
                      svg='<svg xmlns="http://www.w3.org/2000/svg"><script>window.__xss=1</script></svg>'))
    html = render_html(report, runs)
    assert "<script>window.__xss" not in html
    assert_self_contained_and_inert(html)


def test_long_observations_are_cut_with_a_note(tmp_path):
    runs = [make_run(tmp_path, "r", instances=3, turns=(3, 3))]
    html = render_html(make_report(runs, figures=False), runs)
    assert "characters cut here; the full text is in the run directory" in html
    assert "characters were cut before the model saw it" in html
    longest = max(len(m) for m in re.findall(r"<pre>(.*?)</pre>", html, re.S))
    assert longest < MAX_OBSERVATION * 3


def test_a_broken_record_is_noted_not_fatal(tmp_path):
    runs = [make_run(tmp_path, "r", instances=3)]
    key = runs[0].rows[0].case_id
    (runs[0].store.instance_dir(key) / "transcript.json").write_text("{not json")
    html = render_html(make_report(runs, figures=False), runs)
    assert "transcript.json: ValidationError" in html


def test_write_html_writes_the_page(tmp_path):
    runs = [make_run(tmp_path, "r", instances=2)]
    path = write_html(tmp_path / "out" / "report.html", make_report(runs, figures=False), runs)
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_run_without_rows_renders(tmp_path):
    store = RunStore(tmp_path / "empty")
    store.open(RunConfig(run_id="empty", model="oracle"), {})
    run = load_run(store)
    report = Report(title="empty", runs=[run.info])
    for figure in all_figures(report, [run]):
        report.add(figure)
    assert report.figures == []
    assert_self_contained_and_inert(render_html(report, [run]))


def test_the_fixture_runs_render(tmp_path):
    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "runs_v1"
    runs = [load_run(RunStore(fixtures / name)) for name in ("v1-oracle-codeact", "v1-oracle-tools")]
    report = make_report(runs)
    html = render_html(report, runs)
    assert_self_contained_and_inert(html)
    assert "data:image/png;base64," in html  # nc_erp_image's retained ERP image


def test_two_runs_of_467_instances_render_every_instance(tmp_path):
    """The size the reporting layer is built for (its build time is measured by make bench)."""
    runs = [make_run(tmp_path, "big-a", instances=467, seed=1),
            make_run(tmp_path, "big-b", model="model-b", paradigm="tools", instances=467, seed=2)]
    html = render_html(make_report(runs), runs)
    page = assert_self_contained_and_inert(html)
    assert sum(anchor.startswith("i-") for anchor in page.ids) == 2 * 467
