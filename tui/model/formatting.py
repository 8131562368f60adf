"""Pure number, time and cell-width formatting (no Textual): the one way the app writes counts,
money, durations, shares and times, so that one figure reads the same on every screen."""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone

from rich.cells import cell_len, set_cell_size

from tui.model.text import ELLIPSIS, visible


def fit(value: object, width: int, multiline: bool = False) -> str:
    """An untrusted value made visible, cut to `width` terminal cells with an ellipsis, padded."""
    if isinstance(value, str):
        # No cell takes fewer than a quarter of a character here (visible() spells out the
        # zero-width ones), so a megabyte of text is cut before it is made visible.
        value = value[: 4 * max(width, 0) + 8]
    text = visible(value, multiline=multiline)
    if width <= 0:
        return ""
    if cell_len(text) > width:
        text = set_cell_size(text, width - 1) + ELLIPSIS
    return set_cell_size(text, width)


_DATE_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


def model_label(name: str, width: int) -> str:
    """A model's name in `width` characters: whole when it fits, else without its date
    (`claude-3-5-sonnet-20241022` -> `claude-3-5-sonnet`), cut in its middle if need be, which
    keeps the end that tells models apart (`text-emb…3-small`)."""
    name = visible(name)
    if len(name) <= width:
        return name
    return middle_cut(_DATE_SUFFIX.sub("", name), width)


def middle_cut(text: str, width: int) -> str:
    """`text` in `width` characters, cut in its middle with an ellipsis: `text-emb…3-small`."""
    if len(text) <= width:
        return text
    if width < 3:
        return text[:width]
    tail = (width - 1) // 2
    return text[: width - 1 - tail] + ELLIPSIS + text[len(text) - tail :]


def fit_right(value: object, width: int) -> str:
    """Like `fit`, aligned right (numbers)."""
    return fit(value, width).rstrip().rjust(width) if width > 0 else ""


def counted(count: int, noun: str) -> str:
    """`1 error`, `2,501 traces`: a count with its noun (plural by an s), thousands marked."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def count(value: float | None) -> str:
    """Every count the app shows (traces, tokens, requests): `2,367` below ten thousand (the
    thousands marked), then `23.4k`, `234k`, `1.2M`. One way everywhere, so figures compare."""
    if value is None or not math.isfinite(value):
        return "–"
    if abs(value) < 10_000:
        return f"{value:,.0f}"
    if abs(value) < 100_000:
        return f"{value / 1000:.1f}k"
    if abs(value) < 1_000_000:
        return f"{value / 1000:.0f}k"
    if abs(value) < 1e12:
        return f"{value / 1e6:.1f}M"
    return "huge"


def tokens(value: int | None) -> str:
    """A token count (as every count: `count`)."""
    return count(value)


# What a span's cost shows when its model has no price: its $0 is not a price.
UNKNOWN_COST = "unknown"


def cost_is_unknown(attributes: object) -> bool:
    """Whether the service could not price a span's model: it then records 0 and says so in
    `tracetui.cost_source` (servers that send null instead show "–")."""
    return (
        isinstance(attributes, dict) and attributes.get("tracetui.cost_source") == "unknown_model"
    )


def cost(value: float | None, known: bool = True) -> str:
    """Every amount of money the app shows: `$0.0086` below a dollar, `$2.05` above; `known`
    False for a model without a price (UNKNOWN_COST, never `$0`)."""
    if not known:
        return UNKNOWN_COST
    if value is None or not math.isfinite(value):
        return "–"
    if value == 0:
        return "$0"
    if abs(value) < 0.0001:
        return "<$0.0001"
    if abs(value) < 1:
        return f"${value:.4f}"
    if abs(value) < 1e6:
        return f"${value:,.2f}"
    return "$huge"


# After a trace's cost when some of its spans have a model without a price: the cost shown is
# what was priced, and the trace cost more ("$0.0087+" reads "at least"). One cell: the list's
# cost column is 8 cells at its narrowest, and "$0.0087+" takes them all.
MORE_UNPRICED = "+"


def trace_cost(value: float | None, unpriced_spans: int | None) -> str:
    """A trace's cost from its total and its count of spans whose model has no price (None
    from a server that does not count them: the plain cost). Nothing priced: UNKNOWN_COST,
    never `$0`; some priced: the priced part as a lower bound (`$0.0087+`)."""
    shown = cost(value)
    if not unpriced_spans or unpriced_spans < 0:
        return shown
    if not value or not shown.startswith("$"):  # 0, none, or too small to say "at least"
        return UNKNOWN_COST
    return shown + MORE_UNPRICED


def byte_size(size: int) -> str:
    """A size in bytes as file managers write it (decimal units): `980 B`, `512 kB`, `3.2 MB`."""
    if size < 1000:
        return f"{size:,} B"
    if size < 1_000_000:
        return f"{size / 1000:,.0f} kB"
    return f"{size / 1_000_000:,.1f} MB"


def percent(value: float | None) -> str:
    """A share in per cent: one decimal below 10 % (`1.9%`), none above (`42%`)."""
    if value is None or not math.isfinite(value):
        return "–"
    if value == 0:
        return "0%"
    return f"{value:.1f}%" if abs(value) < 10 else f"{value:.0f}%"


def duration(ms: float | None) -> str:
    if ms is None or not math.isfinite(ms):
        return "–"
    if ms < 0:
        return "<0"
    if ms < 1000:
        return f"{ms:.0f}ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f}s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    if seconds < 86400 * 365:
        return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"
    return ">1y"


def ago(moment: datetime | None, now: datetime | None = None) -> str:
    if moment is None:
        return ""
    now = now or datetime.now(timezone.utc)
    try:
        seconds = (now - moment).total_seconds()
    except OverflowError:
        return ""
    if seconds < 0:
        return "future"
    for size, unit in ((86400 * 365, "y"), (86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return f"{int(seconds)}s ago"


def local_time(moment: datetime | None, seconds: bool = True) -> str:
    """Month-day and time in the user's time zone."""
    if moment is None:
        return "–"
    try:
        local = moment.astimezone()
    except (OverflowError, OSError, ValueError):
        return moment.strftime("%Y-%m-%d %H:%M:%S") if moment.year > 0 else "–"
    return local.strftime("%m-%d %H:%M:%S" if seconds else "%m-%d %H:%M")
