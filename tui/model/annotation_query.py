"""The query line's annotation terms (pure): `has:note`, `label:root_cause=retriever`,
`score:correctness<0.5` (also `<=`, `>`, `>=`), read into a TraceFilter's `annotations`,
`labels` and `scores`, written back, and judged on a loaded row from its annotations' summary.

A loaded row carries each name's latest label and score (tui/model/annotations.py), so on
loaded rows `label:` and `score:` judge the latest annotation of the name; a server that offers
the filters judges every annotation of the name (the exact answer, which the list then shows).
"""

from __future__ import annotations

import math
import re
from typing import Any

from tui.api.models import ScoreBound, TraceFilter
from tui.model.annotations import Summary

# The query words of the three terms (tui/model/query.py's VALUE_FIELDS sends them here).
TERMS = ("has", "label", "score")
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_SCORE = re.compile(rf"^(.+?)(<=|>=|<|>)({_NUMBER})$", re.DOTALL)


class TermError(ValueError):
    """An annotation term that cannot be read; str() says why (query.py makes it a QueryError)."""


def read_term(word: str, field: str, value: str) -> tuple[str, Any]:
    """(the TraceFilter field, the value it adds) of `has:`, `label:` or `score:` with `value`
    (already unquoted)."""
    if field == "has":
        return "annotations", value
    if field == "label":
        name, equals, label = value.partition("=")
        if not equals or not name or not label:
            raise TermError(f"{word}: write label:NAME=VALUE (label:root_cause=retriever)")
        return "labels", (name, label)
    found = _SCORE.match(value)
    if found is None:
        raise TermError(f"{word}: write score:NAME<NUMBER or >, <=, >= (score:correctness<0.5)")
    name, operator, number = found.groups()
    bound = float(number)
    if not math.isfinite(bound):
        raise TermError(f"{word}: {number} is too large")
    return "scores", ScoreBound(name, operator, bound)


def _score_text(value: float) -> str:
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def term_words(query: TraceFilter, quote: Any) -> list[str]:
    """The query words that read back as `query`'s annotation terms; `quote` writes a value so
    that it reads back as itself (query.py's)."""
    words = [f"has:{quote(name)}" for name in query.annotations]
    words += [f"label:{quote(f'{name}={label}')}" for name, label in query.labels]
    words += [f"score:{quote(f'{b.name}{b.operator}{_score_text(b.value)}')}" for b in query.scores]
    return words


def judged(query: TraceFilter, summary: Summary | None) -> bool:
    """Whether a loaded row whose annotations' summary is `summary` passes the annotation
    terms (each name's latest label and score); a row with no summary passes none of them."""
    if not query.has_annotation_terms:
        return True
    if summary is None:
        return False
    if any(name not in summary for name in query.annotations):
        return False
    for name, label in query.labels:
        each = summary.get(name)
        if each is None or each.label != label:
            return False
    for bound in query.scores:
        each = summary.get(bound.name)
        if each is None or not bound.holds(each.score):
            return False
    return True


def within(narrow: TraceFilter, wide: TraceFilter) -> bool:
    """Whether every trace `narrow`'s annotation terms keep, `wide`'s keep too."""
    return (
        set(wide.annotations) <= set(narrow.annotations)
        and set(wide.labels) <= set(narrow.labels)
        and set(wide.scores) <= set(narrow.scores)
    )


def left_to_do(narrow: TraceFilter, done: TraceFilter) -> dict[str, Any]:
    """The annotation terms of `narrow` that `done` (applied by the server) did not apply."""
    return {
        "annotations": tuple(n for n in narrow.annotations if n not in done.annotations),
        "labels": tuple(label for label in narrow.labels if label not in done.labels),
        "scores": tuple(bound for bound in narrow.scores if bound not in done.scores),
    }
