"""TraceFilter: what a trace list asks the server for beyond its time window, as the documented
extensions of GET /v1/traces take it: the search's filters and sorts, the text of inputs or
outputs alone (`input`, `output`), conditions on one span (the `span_` parameters), and the
annotations' (`annotation`, `label`, `min_score`, `max_score`, each repeatable).

A score bound keeps the comparison the user wrote. The server's bounds are inclusive, so a
strict one (`score:correctness<0.5`) is sent as the nearest float inside it (the largest double
below 0.5): the server's answer is then exactly the strict one, with no re-check on the rows
(which carry each name's latest score only, and could not judge a trace with several).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

# The sort keys GET /v1/traces's `sort` takes (an extension), and its orders.
TRACE_SORTS = ("started_at", "duration_ms", "total_cost_usd", "total_tokens")
SORT_ORDERS = ("desc", "asc")
SCORE_OPERATORS = ("<", "<=", ">", ">=")
# A parameter no server offers: a condition that cannot be written as a query parameter (a label
# whose name holds the colon that separates it from the value) keeps the filter on the rows.
UNSENDABLE = "(not expressible as a parameter)"
# The TraceFilter fields of one span's conditions, and those sent as a repeated parameter.
SPAN_CONDITIONS = (
    "span_model",
    "span_name",
    "span_kind",
    "span_status",
    "span_min_latency_ms",
    "span_max_latency_ms",
)
REPEATED = {"tags": "tag", "inputs": "input", "outputs": "output", "annotations": "annotation"}


@dataclass(frozen=True)
class ScoreBound:
    """`score:NAME<0.5`: an annotation of this name whose score compares so with `value`."""

    name: str
    operator: str  # one of SCORE_OPERATORS
    value: float

    def holds(self, score: float | None) -> bool:
        if score is None:
            return False
        if self.operator == "<":
            return score < self.value
        if self.operator == "<=":
            return score <= self.value
        if self.operator == ">":
            return score > self.value
        return score >= self.value

    def parameter(self) -> tuple[str, str]:
        """(min_score or max_score, `NAME:NUMBER`) as the server takes it (inclusive: a strict
        bound is the nearest float inside it)."""
        value = self.value
        if self.operator == "<":
            value = math.nextafter(value, -math.inf)
        elif self.operator == ">":
            value = math.nextafter(value, math.inf)
        field = "min_score" if self.operator.startswith(">") else "max_score"
        return field, f"{self.name}:{value!r}"


@dataclass(frozen=True)
class TraceFilter:
    """What a trace list asks the server for beyond the time window (documented extensions of
    GET /v1/traces: each field is the query parameter of its name, `tags` the repeated `tag`,
    the annotations' conditions `annotation`, `label` and `min_score`/`max_score`). None (or an
    empty tuple) leaves a field out; every field given must match (AND)."""

    q: str | None = None  # words or "quoted phrases", each a substring of the trace's text
    status: str | None = None  # "ok" or "error"
    model: str | None = None
    name: str | None = None
    min_latency_ms: float | None = None
    max_latency_ms: float | None = None
    min_cost_usd: float | None = None
    user_id: str | None = None
    session_id: str | None = None
    tags: tuple[str, ...] = ()
    # Conditions on one span of the trace, all true of the same span.
    span_model: str | None = None
    span_name: str | None = None
    span_kind: str | None = None
    span_status: str | None = None
    span_min_latency_ms: float | None = None
    span_max_latency_ms: float | None = None
    # Text in the trace's inputs only, outputs only: the repeated `input` and `output`.
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    # The trace or one of its spans has an annotation of each name (`has:note`)...
    annotations: tuple[str, ...] = ()
    # ... of this name with this label (`label:root_cause=retriever`)...
    labels: tuple[tuple[str, str], ...] = ()
    # ... of this name whose score is within the bound (`score:correctness<0.5`).
    scores: tuple[ScoreBound, ...] = ()
    sort: str | None = None  # one of TRACE_SORTS; None: the server's default (started_at)
    order: str | None = None  # "desc" or "asc"; None: the server's default (desc)

    @property
    def is_empty(self) -> bool:
        return self == TraceFilter()

    @property
    def has_annotation_terms(self) -> bool:
        return bool(self.annotations or self.labels or self.scores)

    @property
    def has_span(self) -> bool:
        """Whether a span must meet conditions."""
        return any(getattr(self, name) is not None for name in SPAN_CONDITIONS)

    @property
    def parameter_names(self) -> frozenset[str]:
        """The query parameters this filter needs the server to offer."""
        names = set(self.params())
        if any(":" in name for name, _ in self.labels):
            names.add(UNSENDABLE)
        return frozenset(names)

    def params(self) -> dict[str, Any]:
        """The query parameters of GET /v1/traces: a list for each repeated one."""
        params: dict[str, Any] = {}
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name in REPEATED:
                if value:
                    params[REPEATED[field.name]] = list(value)
            elif field.name == "labels":
                if value:
                    params["label"] = [f"{name}:{label}" for name, label in value]
            elif field.name == "scores":
                for bound in value:
                    parameter, text = bound.parameter()
                    params.setdefault(parameter, []).append(text)
            elif value is not None:
                params[field.name] = value
        return params
