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
file a browser opens.
"""
from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from runner.core.fileio import write_atomic
from runner.core.transcript import Turn
from runner.report.context import slug
from runner.report.format import MISSING, is_numeric
from runner.report.format import format_cell as shared_format
from runner.report.model import Figure, Report, ReportTable
from runner.report.rows import InstanceRow, RunData, RunInfo, UnitRow
from runner.run.records import ArtifactEntry, entry_key
from validation.instance import Instance
from validation.scoring import InstanceScore, MetricResult
from validation.unit import TRUTH_KEYS

# Cut sizes (characters): enough to follow what happened, small enough that two runs of 467
# instances with 20 turns each stay a file of tens of megabytes.
MAX_REPLY = 6000
MAX_CODE = 8000
MAX_OBSERVATION = 3000
MAX_TOOL_TEXT = 3000
MAX_REPORT = 20000
MAX_INSTRUCTION = 10000
MAX_VALUE = 600  # a parsed or expected value shown in the unit table
MAX_IMAGE_BYTES = 200_000  # one embedded image
IMAGE_BUDGET = 40_000_000  # all embedded images of one page together
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


# --- formatting -----------------------------------------------------------------------------

def format_cell(value: Any, kind: str) -> str:
    """A table value as shown, written as the terminal writes it (runner.report.format), made
    safe for what a table may hold that the terminal never sees: NaN and infinities, and an
    estimate without an interval (too few clusters to resample) show as "–" or the mean alone."""
    if kind == "estimate" and isinstance(value, dict):
        return _estimate(value)
    if isinstance(value, float) and not math.isfinite(value):
        return MISSING
    return shared_format(value, kind)


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _text(value: Any) -> str:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _estimate(value: dict[str, Any]) -> str:
    mid, low, high = (_finite(value.get(k)) for k in ("value", "low", "high"))
    if mid is None:
        return MISSING
    if low is None or high is None:
        return shared_format(mid, "score")
    return shared_format({"value": mid, "low": low, "high": high}, "estimate")


def _sort_value(value: Any, kind: str) -> str | None:
    """The cell's data-v for the sorting script: the number, "" for missing, None for text."""
    if kind == "text":
        return None
    if kind == "estimate" and isinstance(value, dict):
        value = value.get("value")
    number = _finite(value)
    return "" if number is None else repr(number)


def cut(text: str, limit: int) -> str:
    """`text`, or its head and tail around a note of how much was left out."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return (f"{text[:head]}\n\n[… {len(text) - limit:,} characters cut here; the full text is in the run "
            f"directory …]\n\n{text[-tail:]}")


# --- anchors --------------------------------------------------------------------------------

def _tag(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def instance_anchor(run_id: str, case_id: str, epoch: int = 1) -> str:
    """The element id of one instance run in the browser: readable slugs, made unique by a
    hash of the exact names (two keys may slug alike)."""
    key = entry_key(case_id, epoch)
    return f"i-{slug(run_id)}-{slug(key)}-{_tag(run_id + chr(0) + key)}"


def run_anchor(run_id: str) -> str:
    """The element id of a run's provenance card."""
    return f"run-{slug(run_id)}-{_tag(run_id)}"


# --- views ----------------------------------------------------------------------------------

@dataclass
class Cell:
    """One formatted table cell."""

    text: str
    numeric: bool = False
    sort: str | None = None
    href: str | None = None


@dataclass
class TableView:
    """A table ready to print: headers, formatted rows, notes."""

    name: str
    title: str
    headers: list[tuple[str, bool]]  # (title, numeric)
    rows: list[list[Cell]]
    notes: list[str]
    collapsed: bool


@dataclass
class FigureView:
    """A figure: inline SVG when it passed the check, else an <img> data URI."""

    name: str
    title: str
    caption: str
    svg: Markup | None
    image: str | None


@dataclass
class SectionView:
    """One section's anchor, tables and figures."""

    title: str
    anchor: str
    tables: list[TableView] = field(default_factory=list)
    figures: list[FigureView] = field(default_factory=list)


@dataclass
class RunCard:
    """A run's provenance."""

    anchor: str
    title: str
    facts: list[tuple[str, str]]
    groups: list[tuple[str, list[tuple[str, str]]]]  # controls, resources, model settings, libraries


@dataclass
class TurnView:
    """One turn: reply, code, observation, tool calls."""

    title: str
    reply: str
    code: str | None
    observation: str | None
    observation_title: str
    tool_calls: list[dict[str, str]]
    note: str | None


@dataclass
class UnitView:
    """One validation unit's verdict, as the unit table of an instance shows it."""

    metric: str
    type: str
    weight: str
    predicted: str
    expected: str
    score: str
    detail: str
    params: str
    evidence: str


@dataclass
class ArtifactView:
    """A retained file: an embedded image (data URI) or a listed file."""

    path: str
    size: str
    sha256: str
    note: str
    image: str | None = None


@dataclass
class InstanceView:
    """Everything the browser shows of one instance run."""

    anchor: str
    summary: str
    status: str
    facts: list[tuple[str, str]]
    instruction: str | None = None
    turns: list[TurnView] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    report: str = ""
    units: list[UnitView] = field(default_factory=list)
    artifacts: list[ArtifactView] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # records that could not be read


@dataclass
class RunBrowser:
    """One run's instance runs."""

    anchor: str
    title: str
    instances: list[InstanceView]


@dataclass
class _Budget:
    """What is left of the page's allowance for embedded images."""

    left: int = IMAGE_BUDGET


# --- tables ---------------------------------------------------------------------------------

def _table_view(table: ReportTable, anchors: set[str], runs: set[str]) -> TableView:
    headers = [(c.title, is_numeric(c.kind)) for c in table.columns]
    rows = []
    for row in table.rows:
        links = _row_links(row, anchors, runs)
        rows.append([Cell(text=format_cell(row.get(c.key), c.kind), numeric=is_numeric(c.kind),
                          sort=_sort_value(row.get(c.key), c.kind), href=links.get(c.key))
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
    return [(str(k), _text(v) if v is not None else MISSING) for k, v in sorted(values.items())]


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


# --- instance browser -----------------------------------------------------------------------

def _instance_view(run: RunData, row: InstanceRow, budget: _Budget) -> InstanceView:
    key = entry_key(row.case_id, row.epoch)
    target = row.roles.get("target")
    score = format_cell(row.score, "score")
    summary = " · ".join(x for x in (row.case_id if row.epoch == 1 else f"{row.case_id} (epoch {row.epoch})",
                                     row.task_id, row.subset, row.difficulty or "", row.status, score) if x)
    facts = [("status", row.status), ("score", score), ("rounds", str(row.rounds)),
             ("duration", format_cell(row.duration_s, "seconds")),
             ("target tokens", format_cell((target.prompt_tokens + target.completion_tokens) if target else None, "int")),
             ("parse", row.parse_method or MISSING)]
    if row.error:
        facts.append(("error", row.error))
    view = InstanceView(anchor=instance_anchor(run.run_id, row.case_id, row.epoch), summary=summary,
                        status=row.status, facts=facts)
    instance = _read(view, "instance.json", lambda: run.store.saved_instance(key))
    if instance is not None:
        paths = instance.agent_input.data_path
        view.instruction = cut(instance.agent_input.instruction, MAX_INSTRUCTION)
        view.facts.append(("input", ", ".join(paths) if isinstance(paths, list) else paths))
    transcript = _read(view, "transcript.json", lambda: run.store.read_transcript(key))
    if transcript is not None:
        view.turns = [_turn_view(turn) for turn in transcript.turns]
        view.events = [f"{e.kind}" + (f" (turn {e.turn})" if e.turn is not None else "") + f": {e.detail}"
                       for e in transcript.events]
    view.report = cut(_read(view, "report.md", lambda: run.store.read_report(key)) or "", MAX_REPORT)
    scores = _read(view, "score.json", lambda: _score(run, key))
    view.units = _unit_views(row.units, scores, instance)
    entries = _read(view, "artifacts.json", lambda: run.store.read_artifacts(key)) or []
    view.artifacts = [_artifact_view(run, key, entry, budget) for entry in entries]
    return view


def _read(view: InstanceView, what: str, read: Any) -> Any:
    """A record, or None with a note when it is missing or unreadable (one broken record must
    not take the whole report down)."""
    try:
        return read()
    except (OSError, ValueError) as exc:
        view.problems.append(f"{what}: {type(exc).__name__}: {exc}")
        return None


def _score(run: RunData, key: str) -> InstanceScore | None:
    if run.info.scores:
        return run.store.read_rescore(key, run.info.scores)
    return run.store.read_score(key)


def _turn_view(turn: Turn) -> TurnView:
    usage = turn.usage
    tokens = (f", {usage.prompt_tokens or 0:,} + {usage.completion_tokens or 0:,} tokens"
              if usage.prompt_tokens is not None or usage.completion_tokens is not None else "")
    observation = turn.observation
    observed, observed_title = None, ""
    if observation is not None:
        observed = cut(observation.text, MAX_OBSERVATION)
        observed_title = f"observation: {observation.status}"
        if observation.error_name:
            observed_title += f" ({observation.error_name})"
        if observation.truncated_chars:
            observed_title += f"; {observation.truncated_chars:,} characters were cut before the model saw it"
        if observation.restarted:
            observed_title += "; the kernel was restarted"
    calls = [{"name": c.name, "status": c.status + (f" ({c.error_code})" if c.error_code else ""),
              "arguments": cut(_text(c.arguments), MAX_TOOL_TEXT), "result": cut(c.result, MAX_TOOL_TEXT)}
             for c in turn.tool_calls]
    return TurnView(title=f"turn {turn.index} · {turn.action} · {turn.latency_s:.1f} s{tokens}",
                    reply=cut(_reply_without_code(turn), MAX_REPLY), code=cut(turn.code, MAX_CODE) if turn.code else None,
                    observation=observed, observation_title=observed_title, tool_calls=calls, note=turn.note)


def _reply_without_code(turn: Turn) -> str:
    """The reply with the executed code left out where it appears verbatim: the turn shows
    that code once, under CODE."""
    code = (turn.code or "").strip()
    if not code or code not in turn.reply:
        return turn.reply
    return turn.reply.replace(code, "[the code under CODE]", 1)


def _value(value: Any) -> str:
    if value is None:
        return MISSING
    return cut(value if isinstance(value, str) else _text(value), MAX_VALUE)


def _unit_views(units: list[UnitRow], score: InstanceScore | None, instance: Instance | None) -> list[UnitView]:
    """The score record's metrics (with evidence) when there is one, else the row's units."""
    specs = {m.metric_id: m for m in instance.eval_config.metrics} if instance is not None else {}
    metrics: list[MetricResult | UnitRow] = list(score.metrics) if score is not None else list(units)
    views = []
    for metric in metrics:
        spec = specs.get(metric.metric_id)
        params = {k: v for k, v in (spec.params if spec else {}).items() if k not in TRUTH_KEYS}
        params.update({k: v for k, v in (spec.model_extra or {}).items()} if spec else {})
        evidence = getattr(metric, "evidence", None)
        views.append(UnitView(
            metric=metric.metric_id, type=metric.type, weight=f"{metric.weight:g}",
            predicted=_value(metric.predicted), expected=_value(metric.expected),
            score=format_cell(metric.score, "float") if metric.scored else "not scored",
            detail=metric.detail, params=cut(_text(params), 2 * MAX_VALUE) if params else "",
            evidence=cut(json.dumps(evidence, ensure_ascii=False, indent=1, default=str), 4 * MAX_VALUE)
            if evidence else ""))
    return views


IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".svg": "image/svg+xml"}


def _artifact_view(run: RunData, key: str, entry: ArtifactEntry, budget: _Budget) -> ArtifactView:
    size = format_cell(entry.bytes, "int") + " bytes" if entry.bytes is not None else MISSING
    view = ArtifactView(path=entry.path, size=size, sha256=entry.sha256 or MISSING,
                        note=f"not retained: {entry.skipped}" if entry.skipped else "")
    mime = IMAGE_TYPES.get(Path(entry.path).suffix.lower())
    if entry.skipped or mime is None:
        return view
    data = _artifact_bytes(run, key, entry.path)
    if data is None:
        view.note = "missing from the run directory"
    elif len(data) > MAX_IMAGE_BYTES:
        view.note = f"not embedded: larger than {MAX_IMAGE_BYTES // 1000} kB"
    elif not _looks_like(data, mime):
        view.note = "not embedded: its content is not the image its name says"
    elif len(data) * 4 // 3 > budget.left:
        view.note = "not embedded: the page's image allowance is used up"
    else:
        encoded = base64.b64encode(data).decode("ascii")
        budget.left -= len(encoded)
        view.image = f"data:{mime};base64,{encoded}"
    return view


def _artifact_bytes(run: RunData, key: str, path: str) -> bytes | None:
    """The retained file, read only from inside the instance's artifacts directory."""
    try:
        root = run.store.artifacts_dir(key).resolve()
        file = (root / path).resolve()
        if not file.is_relative_to(root) or not file.is_file():
            return None
        return file.read_bytes()
    except (OSError, ValueError):
        return None


def _looks_like(data: bytes, mime: str) -> bool:
    if mime == "image/png":
        return data.startswith(b"\x89PNG\r\n\x1a\n")
    if mime == "image/jpeg":
        return data.startswith(b"\xff\xd8\xff")
    head = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<svg", b"<?xml", b"<!--", b"<!doctype svg"))


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
    budget = _Budget()
    browsers = [RunBrowser(anchor=f"instances-{run_anchor(run.run_id)}", title=f"{run.run_id} — {run.info.label}",
                           instances=[_instance_view(run, row, budget) for row in run.rows]) for run in runs]
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
