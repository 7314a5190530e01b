import pytest

from runner.report.format import MISSING, format_cell


@pytest.mark.parametrize("value, kind, text", [
    (None, "score", MISSING),
    (72.06, "score", "72.1"),
    (0.4231, "share", "42.3%"),
    ({"value": 72.06, "low": 65.0, "high": 79.349}, "estimate", "72.1 [65.0, 79.3]"),
    (0.0004, "p", "<0.001"),
    (0.0625, "p", "0.062"),
    (1234, "int", "1,234"),
    (12.5, "money", "$12.50"),
    (90.0, "seconds", "90.0 s"),
    (600.0, "seconds", "10.0 min"),
    (True, "text", "yes"),
    (-3e-5, "score", "0.0"),  # rounding noise below zero has no sign
    (-0.06, "score", "-0.1"),
    (-0.0004, "share", "0.0%"),
    ("<b>", "score", "<b>"),
])
def test_cells_are_written_by_kind(value, kind, text):
    assert format_cell(value, kind) == text
