"""One way to write each kind of number (tui/model/formatting.py), and a model without a price
shown as "unknown", never as $0."""

from __future__ import annotations

import pytest

from tui.model import formatting as fmt


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "–"), (0, "0"), (7, "7"), (2367, "2,367"), (12_345, "12.3k"), (720_100, "720k")],
)
def test_one_way_to_write_a_count(value: int | None, text: str) -> None:
    assert fmt.count(value) == text
    assert fmt.tokens(value) == text  # tokens are counts


def test_the_overview_writes_figures_as_the_rest_of_the_app() -> None:
    from tui.ui.screens import overview

    # Its own formatters (a third way to write counts and money) are gone.
    assert not hasattr(overview, "_usd") and not hasattr(overview, "_count")


def test_percent() -> None:
    assert (fmt.percent(1.94), fmt.percent(42.2), fmt.percent(None)) == ("1.9%", "42%", "–")


def test_a_model_without_a_price_costs_unknown_not_zero() -> None:
    unpriced = {"tracetui.cost_source": "unknown_model"}
    assert fmt.cost_is_unknown(unpriced) and not fmt.cost_is_unknown({})
    assert fmt.cost(0.0, known=not fmt.cost_is_unknown(unpriced)) == "unknown"
    assert fmt.cost(0.0) == "$0"


def test_the_rate_budget_says_its_unit() -> None:
    from tui.ui.widgets.status_bar import Status, status_line

    status = Status(server="h", profile="p", rate_remaining=995, rate_limit=1000, refreshed_at=None)
    assert "995/1,000 req/min left" in status_line(status, 120).plain
