import pytest

from runner.report.prices import PriceFileError, load_prices


def test_a_price_file_gives_dollars_per_million_tokens(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text('[models."gpt-x"]\ninput = 2.5\noutput = 10\n')
    prices = load_prices(path)
    assert prices.cost("gpt-x", 1_000_000, 500_000) == pytest.approx(2.5 + 5.0)
    assert prices.cost("unknown", 10, 10) is None


@pytest.mark.parametrize("text, field", [
    ('[models."m"]\ninput = -1\noutput = 1\n', "models.m.input"),
    ('[models."m"]\ninput = 1\n', "models.m.output"),
    ('[models."m"]\ninput = "cheap"\noutput = 1\n', "models.m.input"),
    ("models = 3\n", "[models"),
    ("not toml = = 1", "not TOML"),
])
def test_a_bad_price_file_names_the_field(tmp_path, text, field):
    path = tmp_path / "prices.toml"
    path.write_text(text)
    with pytest.raises(PriceFileError, match=field.replace("[", r"\[")):
        load_prices(path)


def test_a_missing_price_file_is_a_user_error(tmp_path):
    with pytest.raises(PriceFileError, match="no file"):
        load_prices(tmp_path / "none.toml")
