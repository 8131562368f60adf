"""Terminal charts drawn with block characters (no Textual): a one-cell-high sparkline for a
table row and a bar chart of a few rows, each with an alert's threshold marked.

Why our own and not a plotting widget: what these charts must say is where a series stands
against a threshold, in a 20-cell table column or a 6-row box of an 80x24 screen, with gaps
where there was no data, readable without colour (NO_COLOR) and redrawn in well under a frame.
Textual's Sparkline has no threshold, no gaps and no axis; plotext-based widgets spend their few
rows on axes and frames and draw through ANSI strings. Block characters do it in ~150 lines.

The threshold is never shown by colour alone: in a sparkline it is the midline (bars above the
middle are above the threshold, taller than `▄`); in a bar chart it is a dotted row with its
value on the axis. Breaching bars are also styled, for those who have colour.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import groupby
from operator import itemgetter

from rich.text import Text

from tui.model.metrics import breaches

BARS = " ▁▂▃▄▅▆▇█"  # eighths of a cell, from none to full
THRESHOLD_MARK = "┄"
ZERO_MARK = "_"  # a value of exactly zero, on the bottom row: a blank is no data
BREACH_STYLE = "bold red"
BAR_STYLE = "cyan"
AXIS_STYLE = "dim"


def resample(
    values: Sequence[float | None], width: int, pick: Callable[[list[float]], float] = max
) -> list[float | None]:
    """`values` on `width` cells: each cell the `pick` (max: the worst, for a breach above a
    threshold) of the values falling in it; None where none has a value. Fewer values than
    cells are stretched, so a chart always fills its width."""
    if width <= 0:
        return []
    count = len(values)
    if count == 0:
        return [None] * width
    cells: list[float | None] = []
    for cell in range(width):
        first = cell * count // width
        last = max(first + 1, (cell + 1) * count // width)
        present = [v for v in values[first:last] if v is not None]
        cells.append(pick(present) if present else None)
    return cells


def worst_pick(condition: str | None) -> Callable[[list[float]], float]:
    """Which value of several stands for a cell: the one nearest to breaching."""
    return min if condition in ("lt", "lte") else max


def sparkline(
    values: Sequence[float | None],
    width: int,
    threshold: float | None = None,
    condition: str | None = "gt",
) -> Text:
    """One row of bars. With a threshold, the row's middle is the threshold: values beyond it
    (by the condition) are drawn as the upper half `▅▆▇█`, the others as `▁▂▃▄`, each half
    scaled to its own range, so "taller than ▄" reads "above the threshold" whatever the scale.
    Without one, bars scale from zero to the highest value. No data is a blank cell."""
    cells = resample(values, width, worst_pick(condition))
    present = [v for v in cells if v is not None]
    text = Text(no_wrap=True, end="")
    if not present:
        return text.append(" " * width)
    top, bottom = max(present), min(0.0, min(present))
    for value in cells:
        if value is None:
            text.append(" ")
            continue
        if threshold is None:
            text.append(BARS[_level(value, bottom, top, 1, 8)], style=BAR_STYLE)
            continue
        above = value > threshold or (value == threshold and condition == "gte")
        if above:
            level = _level(value, threshold, max(top, threshold), 5, 8)
        else:
            level = _level(value, min(bottom, threshold), threshold, 1, 4)
        breach = breaches(condition, value, threshold)
        text.append(BARS[level], style=BREACH_STYLE if breach else BAR_STYLE)
    return text


def _level(value: float, low: float, high: float, first: int, last: int) -> int:
    """`value` in [low, high] as a bar level in [first, last]."""
    if high <= low:
        return last if value > low else first
    share = (value - low) / (high - low)
    return first + min(last - first, max(0, round(share * (last - first))))


def axis_width(
    values: Sequence[float | None], label: Callable[[float], str], threshold: float | None = None
) -> int:
    """The width of `bar_chart`'s value axis (its labels: the top value, the threshold, 0); the
    bars start one cell after it."""
    top = max([*(v for v in values if v is not None), threshold or 0.0, 0.0])
    shown = [label(top), label(0.0)] + ([label(threshold)] if threshold is not None else [])
    return max(6, *(len(text) for text in shown))


def bar_column(index: int, count: int, plot: int) -> int:
    """The column (0-based, within the bars) where the value at `index` of `count` is drawn,
    the values stretched or squeezed over `plot` cells (`resample`)."""
    if count <= 0:
        return 0
    return min(plot - 1, max(0, int((index + 0.5) * plot / count)))


def bar_chart(
    values: Sequence[float | None],
    width: int,
    height: int,
    label: Callable[[float], str],
    threshold: float | None = None,
    condition: str | None = "gt",
) -> list[Text]:
    """`height` rows of vertical bars over `width` cells, an axis on the left (the top value,
    the threshold on its own row, 0 at the bottom; `label` writes a value with its unit). The
    threshold is a dotted row where the bars do not reach it. Bars rise from zero in one-eighth
    cell steps; zero is `_`, no data a blank."""
    present = [v for v in values if v is not None]
    top = max([*present, threshold or 0.0, 0.0])
    labels = {0: label(top), height - 1: label(0.0)}
    eighths = height * 8
    threshold_row = None
    if threshold is not None and top > 0 and 0 <= threshold <= top:
        # The row the threshold falls in, counted from the top.
        threshold_row = max(0, height - 1 - int(threshold / top * eighths) // 8)
        labels[threshold_row] = label(threshold)  # before the top or zero: it is what matters
    axis = axis_width(values, label, threshold)
    plot = max(1, width - axis - 1)
    cells = resample(values, plot, worst_pick(condition) if threshold is not None else max)
    heights = [None if v is None else (round(v / top * eighths) if top > 0 else 0) for v in cells]
    breaching = [threshold is not None and breaches(condition, value, threshold) for value in cells]
    rows: list[Text] = []
    for row in range(height):
        floor = (height - 1 - row) * 8  # eighths below this row
        glyphs: list[tuple[str, str]] = []  # (character, style) of each cell
        for value, filled, breach in zip(cells, heights, breaching, strict=True):
            amount = 0 if filled is None else max(0, min(8, filled - floor))
            if amount == 0 and row == height - 1 and filled is not None and value:
                amount = 1  # a value above zero always shows
            if amount:
                glyphs.append((BARS[amount], BREACH_STYLE if breach else BAR_STYLE))
            elif row == height - 1 and value == 0:
                glyphs.append((ZERO_MARK, AXIS_STYLE))  # zero is not "no data"
            elif row == threshold_row:
                glyphs.append((THRESHOLD_MARK, AXIS_STYLE))
            else:
                glyphs.append((" ", ""))
        line = Text(no_wrap=True, end="")
        line.append(labels.get(row, "").rjust(axis) + " ", style=AXIS_STYLE)
        # One span per run of a style, not per cell: a chart is redrawn and converted whole.
        for style, run in groupby(glyphs, key=itemgetter(1)):
            line.append("".join(glyph for glyph, _ in run), style=style)
        rows.append(line)
    return rows


EIGHTHS_WIDE = " ▏▎▍▌▋▊▉█"  # eighths of a cell's width, from none to full


def hbar(share: float, width: int, style: str = BAR_STYLE) -> Text:
    """A horizontal bar `share` (0..1) of `width` cells, in eighths of a cell; at least a
    sliver for any share above zero."""
    eighths = round(max(0.0, min(1.0, share)) * width * 8)
    if share > 0 and eighths == 0:
        eighths = 1
    full, part = divmod(eighths, 8)
    bar = "█" * full + (EIGHTHS_WIDE[part] if part else "")
    return Text(bar.ljust(width), style=style, no_wrap=True, end="")
