"""The report as one self-contained HTML file: tables, figures, provenance, instance browser.

Nothing is fetched when the page opens: the CSS and a small sorting script are inline, the
figures are our own matplotlib SVG (checked before they are inlined), and retained images are
data: URIs. Everything that came from a model or a recording (instructions, replies, code,
observations, reports, file names, errors) goes through Jinja's autoescaping, and model-made
SVG files are only ever shown through <img>, which runs no script. A Content-Security-Policy
allows the one inline script by its hash, so even markup that slipped through could not run.

The instance browser holds every run of every instance of every run; table rows that name an
instance run (a `run_id` with `case_id`/`epoch`, or a flips row's `run_a`/`run_b`) link to it.
Long texts are cut (head and tail kept, with a note) so a 2 x 467-instance report stays a
file a browser opens. The views the template renders are in html_views.py, the instance
browser's in html_browser.py; this module builds the page.
"""
from __future__ import annotations

import base64
import hashlib
import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from runner.core.fileio import write_atomic
from runner.report.context import slug
from runner.report.format import MISSING, is_numeric
from runner.report.html_browser import instance_view
from runner.report.html_views import (
    Cell,
    FigureView,
    ImageBudget,
    RunBrowser,
    RunCard,
    SectionView,
    TableView,
    as_text,
    format_cell,
    instance_anchor,
    run_anchor,
    sort_value,
)
from runner.report.model import Figure, Report, ReportTable
from runner.report.rows import RunData, RunInfo

COLLAPSE_ROWS = 50  # longer tables start folded
TEMPLATE = "report.html.j2"
SCRIPT = """\
document.querySelectorAll("table.sortable th").forEach(function (th, i) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0];
    var up = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", up ? "ascending" : "descending");
    var key = function (row) {
      var cell = row.cells[th.cellIndex];
      if (!cell) { return [2, ""]; }
      var v = cell.getAttribute("data-v");
      if (v === null) { return [1, cell.textContent]; }
      return v === "" ? [2, ""] : [0, parseFloat(v)];
    };
    Array.prototype.slice.call(body.rows).sort(function (a, b) {
      var x = key(a), y = key(b);
      if (x[0] !== y[0]) { return x[0] - y[0]; }
      var d = x[0] === 0 ? x[1] - y[1] : String(x[1]).localeCompare(String(y[1]));
      return up ? d : -d;
    }).forEach(function (row) { body.appendChild(row); });
  });
});
function openTarget() {
  var target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  for (var node = target; node; node = node.parentElement) {
    if (node.tagName === "DETAILS") { node.open = true; }
  }
  if (target) { target.scrollIntoView(); }
}
window.addEventListener("hashchange", openTarget);
openTarget();
"""
# Warnings that say the runs are not measured alike (comparability.py's wording) come first.
COMPARABILITY_MARKS = (" differs (", "hold different cases", "--intersect", "own endpoint parsed")


# --- tables ---------------------------------------------------------------------------------

def _table_view(table: ReportTable, anchors: set[str], runs: set[str]) -> TableView:
    headers = [(c.title, is_numeric(c.kind)) for c in table.columns]
    rows = []
    for row in table.rows:
        links = _row_links(row, anchors, runs)
        rows.append([Cell(text=format_cell(row.get(c.key), c.kind), numeric=is_numeric(c.kind),
                          sort=sort_value(row.get(c.key), c.kind), href=links.get(c.key))
                     for c in table.columns])
    return TableView(name=table.name, title=table.title, headers=headers, rows=rows, notes=list(table.notes),
                     collapsed=len(rows) > COLLAPSE_ROWS)


# (column that links, column naming the run): an instance run is named by a run and case_id/epoch
INSTANCE_LINKS = (("case_id", "run_id"), ("score", "run_id"), ("case_id", "run_a"), ("score_a", "run_a"),
                  ("score_b", "run_b"))
RUN_COLUMNS = ("run_id", "run", "run_a", "run_b")


def _row_links(row: dict[str, Any], anchors: set[str], runs: set[str]) -> dict[str, str]:
    """Column key -> link target, for rows that name an instance run (to the browser) or a
    run (to its provenance card). Only targets the page holds are linked."""
    links: dict[str, str] = {}
    epoch = row.get("epoch")
    epoch = epoch if isinstance(epoch, int) and not isinstance(epoch, bool) and epoch >= 1 else 1
    case = row.get("case_id")
    for column, run_key in INSTANCE_LINKS:
        run = row.get(run_key)
        if column in links or case is None or not isinstance(run, str):
            continue
        target = instance_anchor(run, str(case), epoch)
        if target in anchors:
            links[column] = "#" + target
    for column in RUN_COLUMNS:
        run = row.get(column)
        if isinstance(run, str) and run in runs:
            links[column] = "#" + run_anchor(run)
    return links


# --- figures --------------------------------------------------------------------------------

SVG_NS = "{http://www.w3.org/2000/svg}"
# What matplotlib writes. An allow-list, not a deny-list: besides scripts, an HTML tag name
# (b, p, table...) inside <svg> would end the SVG for an HTML parser and be read as HTML.
SVG_ELEMENTS = {"svg", "g", "defs", "clipPath", "path", "use", "text", "tspan", "style", "rect", "circle", "ellipse",
                "line", "polyline", "polygon", "image", "title", "desc", "pattern", "linearGradient",
                "radialGradient", "stop", "mask", "symbol", "marker"}
# What an href in a figure may point at: its own markers (<use>) and imshow's embedded rasters.
LOCAL_HREFS = ("#", "data:image/png;base64,", "data:image/jpeg;base64,")


def _figure_view(figure: Figure) -> FigureView:
    svg = figure.svg[figure.svg.find("<svg"):] if "<svg" in figure.svg else figure.svg
    inline = Markup(svg) if _plain_svg(svg) else None  # checked: our own drawing, nothing active in it
    image = None if inline is not None else "data:image/svg+xml;base64," + base64.b64encode(
        figure.svg.encode("utf-8")).decode("ascii")
    return FigureView(name=figure.name, title=figure.title, caption=figure.caption, svg=inline, image=image)


def _plain_svg(svg: str) -> bool:
    """Whether an SVG is safe to inline as markup: one well-formed <svg> with no script, no
    event handler, no link out of the document, and no construct (comment, CDATA, DOCTYPE,
    processing instruction) that an HTML parser reads differently from an XML one."""
    if "<!" in svg or "<?" in svg:
        return False
    try:
        root = ET.fromstring(svg)
    except ET.ParseError:
        return False
    if root.tag != SVG_NS + "svg":
        return False
    for element in root.iter():
        namespace, _, name = element.tag.rpartition("}")
        if namespace + "}" != SVG_NS or name not in SVG_ELEMENTS:
            return False
        if name == "style" and not _local_urls(element.text or ""):
            return False
        for attribute, value in element.attrib.items():
            local = attribute.rpartition("}")[2].lower()
            if local.startswith("on") or (local == "href" and not value.startswith(LOCAL_HREFS)) \
                    or not _local_urls(value):
                return False
    return True


def _local_urls(text: str) -> bool:
    """Whether every url(...) in a style or attribute points inside the document."""
    if "@import" in text:
        return False
    return all(ref.strip(" '\"").startswith("#") for ref in re.findall(r"url\(([^)]*)\)", text))


# --- provenance -----------------------------------------------------------------------------

def _when(timestamp: float | None) -> str:
    if timestamp is None:
        return MISSING
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _pairs(values: dict[str, Any]) -> list[tuple[str, str]]:
    return [(str(k), as_text(v) if v is not None else MISSING) for k, v in sorted(values.items())]


def _selection(selection: list[str] | None) -> str:
    """What SET= chose: all instances, or the first few names it gave."""
    if not selection:
        return "all"
    shown = ", ".join(selection[:4]) + (f", … ({len(selection)} names)" if len(selection) > 4 else "")
    return f"SET={shown}"


def _run_card(info: RunInfo) -> RunCard:
    parser = info.parser if info.parser_model is None else f"{info.parser} ({info.parser_model})"
    facts = [
        ("model", info.model), ("paradigm", info.paradigm), ("sandbox", info.sandbox), ("parser", parser),
        ("judge", info.judge or MISSING), ("VLM judge", info.vlm_judge or MISSING),
        ("parsed by the evaluated model", "yes" if info.self_parsed else "no"),
        ("scores read from", info.scores or "the run (as scored when it ran)"),
        ("epochs", str(info.epochs)),
        ("instances", _selection(info.selection)),
        ("instance-set hash", info.instance_set_hash or MISSING), ("git revision", info.git_revision or MISSING),
        ("python", info.python or MISSING), ("platform", info.platform or MISSING),
        ("run format", str(info.format_version)), ("started", _when(info.started_at)),
        ("finished", _when(info.finished_at)), ("directory", info.path),
    ]
    groups = [("controls", _pairs(info.controls)), ("resources", _pairs(info.resources)),
              ("model settings", _pairs(info.model_settings)), ("library versions", _pairs(info.libraries))]
    return RunCard(anchor=run_anchor(info.run_id), title=f"{info.run_id} — {info.label}", facts=facts,
                   groups=[(name, pairs) for name, pairs in groups if pairs])


# --- page -----------------------------------------------------------------------------------

def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("runner.report", "templates"), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def _sections(report: Report, anchors: set[str], runs: set[str]) -> list[SectionView]:
    names = list(dict.fromkeys([*report.sections, *(t.section for t in report.tables),
                                *(f.section for f in report.figures)]))
    views = [SectionView(title=name, anchor=f"s{i + 1}-{slug(name)}") for i, name in enumerate(names)]
    by_name = {view.title: view for view in views}
    for table in report.tables:
        by_name[table.section].tables.append(_table_view(table, anchors, runs))
    for figure in report.figures:
        by_name[figure.section].figures.append(_figure_view(figure))
    return views


def _warnings(report: Report) -> tuple[list[str], list[str]]:
    """(comparability problems, other warnings), each in the report's order."""
    first = [w for w in report.warnings if any(mark in w for mark in COMPARABILITY_MARKS)]
    return first, [w for w in report.warnings if w not in first]


def render_html(report: Report, runs: list[RunData], credits: str = "") -> str:
    """The whole report as one HTML page; `credits` (data/ATTRIBUTION.md, when the caller has
    it) is shown as preformatted text after the runs' provenance."""
    budget = ImageBudget()
    browsers = [RunBrowser(anchor=f"instances-{run_anchor(run.run_id)}", title=f"{run.run_id} — {run.info.label}",
                           instances=[instance_view(run, row, budget) for row in run.rows]) for run in runs]
    anchors = {i.anchor for b in browsers for i in b.instances}
    run_ids = {info.run_id for info in report.runs} | {run.run_id for run in runs}
    comparability, other = _warnings(report)
    page = _environment().get_template(TEMPLATE).render(
        title=report.title, comparability=comparability, warnings=other,
        settings=_pairs(report.settings), sections=_sections(report, anchors, run_ids),
        cards=[_run_card(info) for info in report.runs], credits=credits, browsers=browsers,
        script=Markup(SCRIPT), script_hash=_script_hash())
    return page


def _script_hash() -> str:
    """The CSP source that lets the page's own script run, and nothing else."""
    digest = hashlib.sha256(SCRIPT.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def write_html(path: Path, report: Report, runs: list[RunData], credits: str = "") -> Path:
    """Render the report and write it atomically to `path`; returns the path."""
    path = Path(path)
    write_atomic(path, render_html(report, runs, credits))
    return path
