"""The README and docs/: the README fits on a few screens, every link resolves (file and
heading), and every generated table is what the code makes now (`python -m runner.commands.docs`)."""
from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import get_args

from runner.commands import docs
from runner.core.paths import PROJECT_ROOT
from runner.core.transcript import STATUS_DOCS, InstanceStatus

PAGES = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings (lower case, punctuation dropped, spaces to -)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    headings = re.findall(r"^#{1,6} (.+)$", text, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_the_readme_is_at_most_250_lines_and_links_every_page_of_docs():
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    linked = {Path(target.split("#")[0]).name for target in LINK.findall(readme) if target.startswith("docs/")}
    assert {p.name for p in PAGES[1:]} <= linked


def test_every_relative_link_and_anchor_resolves():
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists() or (anchor and anchor not in anchors(file)):
                broken.append(f"{page.relative_to(PROJECT_ROOT)}: {target}")
    assert not broken, broken


def test_every_generated_table_is_current():
    assert docs.stale() == [], "run: python -m runner.commands.docs"


def test_a_stale_table_is_rewritten_and_said(tmp_path):
    for table in docs.TABLES:
        (tmp_path / table.page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PROJECT_ROOT / table.page, tmp_path / table.page)
    page = tmp_path / "docs" / "results.md"
    page.write_text(page.read_text().replace("| `deadline` |", "| `deadlines` |"))
    assert docs.stale(tmp_path) == ["docs/results.md: statuses"]
    assert docs.main(tmp_path) == 1 and docs.main(tmp_path) == 0
    assert page.read_text() == (PROJECT_ROOT / "docs" / "results.md").read_text()


def test_every_status_is_documented_once():
    assert list(STATUS_DOCS) == list(get_args(InstanceStatus))
    assert [s for s, doc in STATUS_DOCS.items() if doc.infrastructure] == ["infra_error"]
