"""The query line's words, read one at a time (pure): how a line splits into words and "quoted
phrases", and how a latency, a cost or a value is read and written back. The two languages
built on it (tui/model/query.py, the whole line; tui/model/span_query.py, a `span(...)` group)
share these, so that `latency>2s` reads the same in both.
"""

from __future__ import annotations

import math
import re

UNITS = {"ms": 1.0, "s": 1000.0, "m": 60_000.0}

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
COMPARISON = re.compile(r"^(latency|duration|cost)(>=|<=|>|<|=)(.*)$", re.IGNORECASE)
_LATENCY = re.compile(rf"^({_NUMBER})(ms|s|m)$", re.IGNORECASE)
_COST = re.compile(rf"^\$?({_NUMBER})$")
FIELD = re.compile(r"^([A-Za-z_]+):(.*)$", re.DOTALL)
# A word: quoted runs and plain characters, up to whitespace outside quotes.
_WORD = re.compile(r'(?:"[^"]*"|[^\s"])+')


class QueryError(ValueError):
    """The query cannot be read; str() says why, for the user."""


def words_of(text: str) -> list[str]:
    if text.count('"') % 2:
        raise QueryError('a quote (") is not closed')
    return _WORD.findall(text)


def unquote(word: str) -> tuple[str, bool]:
    """The word without its quotes, and whether any part of it was quoted."""
    return word.replace('"', ""), '"' in word


def number(text: str, what: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise QueryError(f"{what}: {text} is too large")
    return value


def latency_of(word: str, value: str) -> float:
    found = _LATENCY.match(value)
    if found is None:
        raise QueryError(
            f"{word}: a latency is a number with a unit, ms, s or m (latency>2s, latency<500ms)"
        )
    return number(found.group(1), word) * UNITS[found.group(2).lower()]


def cost_of(word: str, value: str) -> float:
    found = _COST.match(value)
    if found is None:
        raise QueryError(f"{word}: a cost is a number of dollars (cost>0.01 or cost>$0.01)")
    return number(found.group(1), word)


def written(value: str) -> str:
    """A value written so that it reads back as itself (a value never holds a quote)."""
    return value if value and not re.search(r"\s", value) else f'"{value}"'


def ms_text(value: float) -> str:
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def duration_text(ms: float) -> str:
    """`2s` for 2000 ms (whole seconds read back exactly), else milliseconds."""
    if ms >= 1000 and ms % 1000 == 0 and ms < 1e15:
        return f"{int(ms) // 1000}s"
    return f"{ms_text(ms)}ms"
