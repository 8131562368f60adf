"""What a GET /v1/traces request asks beyond the spec's window: its filters and its sort, checked
once, whether they come from the query's parameters or back from a cursor.

`q` is split into words and "quoted phrases"; each must occur, case-insensitive, as a substring
of the trace's text (search.text), and each must be 3 characters or more (the trigram indexes
of both stores need 3). A model is matched as ingest stores it: lower-cased. `input` and
`output` (repeatable) are each one substring, found in the trace's inputs only, or outputs only.

The `span_` filters are conditions on one span: a trace is kept when ONE of its spans meets
every one given (its model, name, kind, status and duration bounds), not when each is met by
some span or by the trace as a whole.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any

KINDS = ("llm", "retrieval", "tool", "agent", "chain")  # a span's kinds, as ingest stores them
SPAN_FIELDS = (
    "span_model",
    "span_name",
    "span_kind",
    "span_status",
    "span_min_latency_ms",
    "span_max_latency_ms",
)
SORTS = {  # the parameter's value -> the column or expression the traces are ordered by
    # A trace's first-stored start (rows.TraceRow.listed_at), which a late root never moves:
    # the spec's order, and the one a cursor stays exact under while spans arrive.
    "started_at": "listed_at",
    "duration_ms": "duration_ms",
    "total_cost_usd": "total_cost_usd",
    "total_tokens": "(input_tokens + output_tokens)",
}
ORDERS = ("desc", "asc")
STATUSES = ("ok", "error")
MIN_TERM = 3
MAX_TERMS = 10
MAX_Q = 500
MAX_VALUE = 200  # a name, model, user, session or tag
MAX_TAGS = 10
_TERMS = re.compile(r'"([^"]*)"?|(\S+)')


def terms_of(q: str) -> tuple[str, ...]:
    """The words and "quoted phrases" of `q` (a quote left open runs to the end)."""
    found = []
    for phrase, word in _TERMS.findall(q):
        term = " ".join((phrase or word).split())
        if term:
            found.append(term)
    return tuple(found)


class InvalidFilter(ValueError):
    """A filter the service does not take: the route answers 422 naming `field`."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field} {message}.")
        self.field = field
        self.message = message


def invalid(field: str, message: str) -> InvalidFilter:
    return InvalidFilter(field, message)


@dataclass(frozen=True)
class TraceFilters:
    """A request's filters (combined with AND) and its order; None: not filtered by that."""

    q: str | None = None
    status: str | None = None
    model: str | None = None
    name: str | None = None
    min_latency_ms: float | None = None
    max_latency_ms: float | None = None
    min_cost_usd: float | None = None
    user_id: str | None = None
    session_id: str | None = None
    tags: tuple[str, ...] = ()
    # Conditions on one span, all true of the same span.
    span_model: str | None = None
    span_name: str | None = None
    span_kind: str | None = None
    span_status: str | None = None
    span_min_latency_ms: float | None = None
    span_max_latency_ms: float | None = None
    # Text the trace's inputs hold, its outputs hold: each a substring, case-insensitive.
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    sort: str = "started_at"
    order: str = "desc"

    def __post_init__(self) -> None:
        self.check()

    @property
    def terms(self) -> tuple[str, ...]:
        return terms_of(self.q) if self.q else ()

    @property
    def has_span(self) -> bool:
        """Whether a span must meet conditions (the span_ filters)."""
        return any(getattr(self, field) is not None for field in SPAN_FIELDS)

    @property
    def has_text(self) -> bool:
        """Whether any text is searched for (`q`, `input`, `output`)."""
        return bool(self.terms or self.inputs or self.outputs)

    @property
    def sort_key(self) -> str:
        return SORTS[self.sort]

    @property
    def is_default(self) -> bool:
        """No filter, the spec's order: the spec's listing."""
        return self == TraceFilters()

    def check(self) -> None:
        """InvalidFilter (naming the field) for anything the service does not take."""
        for field in ("q", "model", "name", "user_id", "session_id"):
            if "\x00" in (getattr(self, field) or ""):
                raise invalid(field, "must not hold a NUL character")
        if any("\x00" in tag for tag in self.tags if isinstance(tag, str)):
            raise invalid("tag", "must not hold a NUL character")
        if self.q is not None:
            if len(self.q) > MAX_Q:
                raise invalid("q", f"must be at most {MAX_Q} characters")
            terms = self.terms
            if not terms:
                raise invalid("q", "must hold a word")
            if len(terms) > MAX_TERMS:
                raise invalid("q", f"must hold at most {MAX_TERMS} words")
            if any(len(term) < MIN_TERM for term in terms):
                raise invalid("q", f"every word must be {MIN_TERM} characters or more")
        if self.status is not None and self.status not in STATUSES:
            raise invalid("status", "must be ok or error")
        self._check_span_and_parts()
        if self.sort not in SORTS:
            raise invalid("sort", "must be one of " + ", ".join(SORTS))
        if self.order not in ORDERS:
            raise invalid("order", "must be desc or asc")
        for field in ("model", "name", "user_id", "session_id"):
            value = getattr(self, field)
            if value is not None and not (isinstance(value, str) and 0 < len(value) <= MAX_VALUE):
                raise invalid(field, f"must be 1 to {MAX_VALUE} characters")
        for field in ("min_latency_ms", "max_latency_ms", "min_cost_usd"):
            number = getattr(self, field)
            if number is not None and (
                isinstance(number, bool)
                or not isinstance(number, (int, float))
                or not math.isfinite(number)
                or number < 0
            ):
                raise invalid(field, "must be a number >= 0")
        if len(self.tags) > MAX_TAGS:
            raise invalid("tag", f"may be given {MAX_TAGS} times at most")
        if any(not isinstance(t, str) or not 0 < len(t) <= MAX_VALUE for t in self.tags):
            raise invalid("tag", f"must be 1 to {MAX_VALUE} characters")

    def _check_span_and_parts(self) -> None:
        for field in ("span_model", "span_name"):
            value = getattr(self, field)
            if value is not None and not (
                isinstance(value, str) and 0 < len(value) <= MAX_VALUE and "\x00" not in value
            ):
                raise invalid(field, f"must be 1 to {MAX_VALUE} characters")
        if self.span_kind is not None and self.span_kind not in KINDS:
            raise invalid("span_kind", "must be one of " + ", ".join(KINDS))
        if self.span_status is not None and self.span_status not in STATUSES:
            raise invalid("span_status", "must be ok or error")
        for field in ("span_min_latency_ms", "span_max_latency_ms"):
            number = getattr(self, field)
            if number is not None and (
                isinstance(number, bool)
                or not isinstance(number, (int, float))
                or not math.isfinite(number)
                or number < 0
            ):
                raise invalid(field, "must be a number >= 0")
        for field, texts in (("input", self.inputs), ("output", self.outputs)):
            if len(texts) > MAX_TERMS:
                raise invalid(field, f"may be given {MAX_TERMS} times at most")
            for text in texts:
                if not isinstance(text, str) or "\x00" in text:
                    raise invalid(field, "must be text without a NUL character")
                if len(text.strip()) < MIN_TERM or len(text) > MAX_VALUE:
                    raise invalid(field, f"must be {MIN_TERM} to {MAX_VALUE} characters")

    def to_json(self) -> dict[str, Any]:
        """The filters as a cursor carries them (only those set)."""
        found = {k: v for k, v in asdict(self).items() if v not in (None, ())}
        for field in ("tags", "inputs", "outputs"):
            if getattr(self, field):
                found[field] = list(getattr(self, field))
        return found

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TraceFilters:
        """The filters a cursor carried; ValueError for any that this service would not have
        written (the caller answers 400 invalid_cursor)."""
        known = set(cls.__dataclass_fields__)
        if not set(data) <= known:
            raise ValueError("unknown filter")
        values = dict(data)
        lists: dict[str, Any] = {}
        for field in ("tags", "inputs", "outputs"):
            listed = values.pop(field, [])
            if not isinstance(listed, list):
                raise ValueError(field)
            lists[field] = tuple(listed)
        texts: tuple[str, ...] = ("q", "status", "model", "name", "user_id", "session_id")
        texts += ("sort", "order", *SPAN_FIELDS[:4])  # the span's model, name, kind, status
        for field in texts:
            if field in values and not isinstance(values[field], str):
                raise ValueError(field)
        try:
            return cls(**values, **lists)
        except (InvalidFilter, TypeError) as error:
            raise ValueError("filters") from error
