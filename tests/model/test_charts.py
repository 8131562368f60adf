"""tui/model/charts.py: the threshold reads without colour, gaps stay gaps, widths are kept."""

from __future__ import annotations

from tui.model import charts

LOWER, UPPER = set("▁▂▃▄"), set("▅▆▇█")


def test_a_sparklines_midline_is_the_threshold() -> None:
    values = [100.0, 900.0, 1500.0, 80_000.0, 1001.0, None, 1000.0]
    line = charts.sparkline(values, 7, threshold=1000, condition="gt").plain
    assert len(line) == 7
    assert [c in UPPER for c in line] == [False, False, True, True, True, False, False]
    assert line[5] == " "  # no data
    # `gte`: the threshold itself breaches; `lt`: the lower half breaches, by style too.
    assert charts.sparkline([1000.0], 1, 1000, "gte").plain in UPPER
    low = charts.sparkline([5.0, 50.0], 2, 10, "lt")
    assert low.plain[0] in LOWER and low.plain[1] in UPPER
    assert [span.style for span in low.spans] == [charts.BREACH_STYLE, charts.BAR_STYLE]


def test_a_sparkline_fits_its_width_and_keeps_the_worst_of_each_cell() -> None:
    values = [1.0] * 95 + [50.0]
    assert charts.sparkline(values, 10, threshold=10).plain[-1] in UPPER  # not averaged away
    assert len(charts.sparkline(values, 300).plain) == 300  # stretched
    assert charts.sparkline([None, None], 4).plain == "    "
    assert charts.resample([3.0, 1.0, 2.0, 9.0], 2, min) == [1.0, 2.0]


def test_a_bar_chart_marks_the_threshold_row_and_labels_the_axis() -> None:
    rows = charts.bar_chart(
        [100.0, 200.0, None, 3000.0],
        width=30,
        height=6,
        label=lambda v: f"{v:.0f} ms",
        threshold=1000,
        condition="gt",
    )
    lines = [row.plain for row in rows]
    assert len(lines) == 6 and all(len(line) == 30 for line in lines)
    assert lines[0].lstrip().startswith("3000 ms") and lines[-1].lstrip().startswith("0 ms")
    marked = [line for line in lines if charts.THRESHOLD_MARK in line]
    assert len(marked) == 1 and marked[0].lstrip().startswith("1000 ms")
    # The breaching bar reaches the top row; the gap column is blank in every row.
    plot = [line[-22:] for line in lines]
    assert plot[0].rstrip()[-1] == "█"
    gap = {line[len(line) // 2] for line in plot}
    assert gap <= {" ", charts.THRESHOLD_MARK}


def test_a_value_above_zero_always_shows() -> None:
    rows = charts.bar_chart([1.0, 10_000.0], width=10, height=3, label=lambda v: f"{v:.0f}")
    assert rows[-1].plain.rstrip()[-2] != " "


def test_zero_is_not_no_data_and_the_threshold_label_wins_its_row() -> None:
    rows = charts.bar_chart(
        [0.0, None, 100.0], width=16, height=4, label=lambda v: f"{v:.0f}%", threshold=5
    )
    bottom = rows[-1].plain
    assert bottom.lstrip().startswith("5% ")  # the threshold, not "0%", labels the bottom row
    plot = bottom[-9:]
    assert plot[:3] == charts.ZERO_MARK * 3 and plot[3:6] == charts.THRESHOLD_MARK * 3  # no data


def test_a_threshold_at_the_top_is_marked_on_the_top_row() -> None:
    rows = charts.bar_chart(
        [100.0, None], width=20, height=5, label=lambda v: f"{v:.0f}", threshold=1000
    )
    assert rows[0].plain.lstrip().startswith("1000 ") and charts.THRESHOLD_MARK in rows[0].plain
