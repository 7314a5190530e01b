"""The variants table: original against variant scores per configuration and transformation."""
import pytest

from runner.report.build import build_report
from runner.report.context import Settings
from tests.fixtures.synthetic_runs import make_run


def test_each_variant_is_paired_with_its_originals_score(tmp_path):
    run = make_run(tmp_path, "vars", instances=40, seed=5)
    scored = [row for row in run.rows if row.scored]
    originals, variants = scored[:6], scored[6:12]
    for index, (original, variant) in enumerate(zip(originals, variants)):
        variant.variant_of = original.case_id
        variant.transform = "noise" if index % 2 else "permute_channels"
    (table,) = [t for t in build_report([run], Settings()).tables if t.name == "variants"]
    by_transform = {row["transform"]: row for row in table.rows}
    assert set(by_transform) == {"noise", "permute_channels", "all"}
    pairs = list(zip(originals, variants))
    for name in ("noise", "permute_channels"):
        chosen = [(o, v) for i, (o, v) in enumerate(pairs) if (i % 2 == 1) == (name == "noise")]
        row = by_transform[name]
        assert row["pairs"] == 3
        assert row["original"] == pytest.approx(sum(float(o.score) for o, _ in chosen) / 3)
        assert row["variant"] == pytest.approx(sum(float(v.score) for _, v in chosen) / 3)
        assert row["gap"] == pytest.approx(row["original"] - row["variant"])
    assert by_transform["all"]["pairs"] == 6


def test_runs_without_variants_have_no_variants_table(tmp_path):
    run = make_run(tmp_path, "plain", instances=12, seed=1)
    assert not [t for t in build_report([run], Settings()).tables if t.name == "variants"]
