"""The cost table: tokens per role as the runs' own records give them."""
import json

from runner.report.build import build_report
from runner.report.context import Settings
from runner.report.rows import load_run
from runner.run.store import RunStore
from tests.runner.report.test_rows import copy_run


def test_reasoning_tokens_are_shown_as_part_of_the_targets_tokens_out(tmp_path):
    root = copy_run(tmp_path)
    lines = [json.loads(line) for line in (root / "results.jsonl").read_text().splitlines()]
    for i, line in enumerate(lines):
        line["completion_tokens"], line["reasoning_tokens"] = 100 + i, i  # format-1 lines have none
    (root / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = build_report([load_run(RunStore(root))], Settings())
    (table,) = [t for t in report.tables if t.name == "cost"]
    (target,) = [r for r in table.rows if r["role"] == "target"]
    assert target["completion_tokens"] == sum(100 + i for i in range(len(lines)))
    assert target["reasoning_tokens"] == sum(range(len(lines))) > 0
    assert "of which reasoning" in [c.title for c in table.columns]
