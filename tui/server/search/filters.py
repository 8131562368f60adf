"""What a GET /v1/traces request asks beyond the spec's window: its filters and its sort, checked
once, whether they come from the query's parameters or back from a cursor.

Annotation filters (`annotation`, `label`, `min_score`, `max_score`, each repeatable) keep the
traces that have, on themselves or on one of their spans, an annotation of the name given (with
that label, or a score within the bound): `label` is `NAME:VALUE`, split at the first colon,
and a score `NAME:NUMBER`, split at the last.

`q` is split into words and "quoted phrases"; each must occur, case-insensitive, as a substring
of the trace's text (search.text), and each must be 3 characters or more (the trigram indexes
of both stores need 3) and MAX_TERM at most. A model is matched as ingest stores it:
lower-cased. `input` and `output` (repeatable) are each one substring, MIN_TERM to MAX_TERM
characters, found in the trace's inputs only, or outputs only.

The `span_` filters are conditions on one span: a trace is kept when ONE of its spans meets
every one given (its model, name, kind, status and duration bounds), not when each is met by
some span or by the trace as a whole.

Why a term is bounded by its length: finding one in a trace's text costs up to the text's
length times the term's on both stores, whatever the index (PostgreSQL's strpos, a Horspool
search, compares up to the whole term at each position of the text when the text repeats its
end; SQLite's FTS5 checks the term's trigrams at each position where its first one is). The
text is bounded (search.text.MAX_TRACE), so with the term bounded each trace costs a bounded
time: measured over 8,000 characters made for it, 0.4 ms per trace on PostgreSQL and 4 ms on
SQLite at 64 characters, against 2.5 ms (strpos) or 13.6 ms (ILIKE) and 40 ms at 498. How many
traces a search reads is bounded by its time budget (http/searches.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any

from tui.server.search.text import folded

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
MAX_TERM = 64  # a word or a quoted phrase: a dozen words
MAX_TERMS = 10
MAX_Q = 500
MAX_VALUE = 200  # a name, model, user, session or tag
MAX_TAGS = 10
MAX_ANNOTATION_NAME = 64
MAX_LABEL = 200
MAX_ANNOTATION_FILTERS = 10  # of each kind
_TERMS = re.compile(r'"([^"]*)"?|(\S+)')


NUMBERS = ("min_latency_ms", "max_latency_ms", "min_cost_usd", *SPAN_FIELDS[4:])


def is_number_at_least_0(value: object) -> bool:
    """A finite int or float >= 0, within a float's range (bool is no number here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        number = float(value)
    except OverflowError:  # an int past 1.8e308
        return False
    return math.isfinite(number) and number >= 0


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
    # Annotations (names; (name, label); (name, bound)): each must be held by the trace or
    # one of its spans.
    annotations: tuple[str, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    min_scores: tuple[tuple[str, float], ...] = ()
    max_scores: tuple[tuple[str, float], ...] = ()
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
    def searched_terms(self) -> tuple[str, ...]:
        """The terms as the stores search them: folded, as the stored texts are."""
        return tuple(folded(term) for term in self.terms)

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
            if any(len(term) > MAX_TERM for term in terms):
                raise invalid(
                    "q", f'every word and "quoted phrase" must be {MAX_TERM} characters at most'
                )
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
        for field in NUMBERS:
            number = getattr(self, field)
            if number is not None and not is_number_at_least_0(number):
                raise invalid(field, "must be a number >= 0")
        if len(self.tags) > MAX_TAGS:
            raise invalid("tag", f"may be given {MAX_TAGS} times at most")
        if any(not isinstance(t, str) or not 0 < len(t) <= MAX_VALUE for t in self.tags):
            raise invalid("tag", f"must be 1 to {MAX_VALUE} characters")
        self._check_annotations()

    def _check_annotations(self) -> None:
        given = {
            "annotation": self.annotations,
            "label": self.labels,
            "min_score": self.min_scores,
            "max_score": self.max_scores,
        }
        for field, values in given.items():
            if len(values) > MAX_ANNOTATION_FILTERS:
                raise invalid(field, f"may be given {MAX_ANNOTATION_FILTERS} times at most")
        for name in self.annotations:
            check_annotation_name("annotation", name)
        for labelled in self.labels:
            if not (isinstance(labelled, tuple) and len(labelled) == 2):
                raise invalid("label", "must be NAME:VALUE")
            check_annotation_name("label", labelled[0])
            label: object = labelled[1]
            if not (isinstance(label, str) and 0 < len(label) <= MAX_LABEL and "\x00" not in label):
                raise invalid("label", f"must be NAME:VALUE, the value 1 to {MAX_LABEL} characters")
        for field, pairs in (("min_score", self.min_scores), ("max_score", self.max_scores)):
            for pair in pairs:
                if not (isinstance(pair, tuple) and len(pair) == 2):
                    raise invalid(field, "must be NAME:NUMBER")
                check_annotation_name(field, pair[0])
                number: object = pair[1]
                if (
                    isinstance(number, bool)
                    or not isinstance(number, (int, float))
                    or not math.isfinite(number)
                ):
                    raise invalid(field, "must be NAME:NUMBER, the number finite")

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
        for field, texts in (("input", self.inputs), ("output", self.outputs)):
            if len(texts) > MAX_TERMS:
                raise invalid(field, f"may be given {MAX_TERMS} times at most")
            for text in texts:
                if not isinstance(text, str) or "\x00" in text:
                    raise invalid(field, "must be text without a NUL character")
                if len(text.strip()) < MIN_TERM or len(text) > MAX_TERM:
                    raise invalid(field, f"must be {MIN_TERM} to {MAX_TERM} characters")

    def to_json(self) -> dict[str, Any]:
        """The filters as a cursor carries them (only those set)."""
        found = {k: v for k, v in asdict(self).items() if v not in (None, ())}
        for field in PAIRED:
            if field in found:
                found[field] = [list(pair) for pair in found[field]]
        for field in LISTED:
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
        for field in LISTED:
            listed = values.pop(field, [])
            if not isinstance(listed, list):
                raise ValueError(field)
            lists[field] = tuple(listed)
        for field in PAIRED:
            pairs = values.pop(field, [])
            if not isinstance(pairs, list) or not all(
                isinstance(p, list) and len(p) == 2 for p in pairs
            ):
                raise ValueError(field)
            lists[field] = tuple(tuple(p) for p in pairs)
        texts: tuple[str, ...] = ("q", "status", "model", "name", "user_id", "session_id")
        texts += ("sort", "order", *SPAN_FIELDS[:4])  # the span's model, name, kind, status
        for field in texts:
            if field in values and not isinstance(values[field], str):
                raise ValueError(field)
        for field in NUMBERS:
            # As the query's parameters are: floats (a JSON integer may be past a float's range,
            # or past what the stores bind as an integer).
            if values.get(field) is not None:
                if not is_number_at_least_0(values[field]):
                    raise ValueError(field)
                values[field] = float(values[field])
        try:
            return cls(**values, **lists)
        except (InvalidFilter, TypeError) as error:
            raise ValueError("filters") from error


PAIRED = ("labels", "min_scores", "max_scores")  # filters of (name, value) pairs
LISTED = ("tags", "inputs", "outputs", "annotations")  # filters of values


def check_annotation_name(field: str, name: object) -> None:
    if not (isinstance(name, str) and name.strip() and len(name) <= MAX_ANNOTATION_NAME):
        raise invalid(field, f"must name an annotation of 1 to {MAX_ANNOTATION_NAME} characters")
    if "\x00" in name:
        raise invalid(field, "must not hold a NUL character")


def label_filter(text: str) -> tuple[str, str]:
    """`NAME:VALUE` (split at the first colon) as (name, label); InvalidFilter on `label`."""
    name, colon, label = text.partition(":")
    if not colon:
        raise invalid("label", "must be NAME:VALUE, e.g. root_cause:retriever")
    return name, label


def score_filter(field: str, text: str) -> tuple[str, float]:
    """`NAME:NUMBER` (split at the last colon) as (name, number); InvalidFilter on `field`."""
    name, colon, number = text.rpartition(":")
    if not colon:
        raise invalid(field, "must be NAME:NUMBER, e.g. correctness:0.5")
    try:
        value = float(number)
    except ValueError:
        raise invalid(field, "must be NAME:NUMBER, e.g. correctness:0.5") from None
    if not math.isfinite(value):
        raise invalid(field, "must be NAME:NUMBER, the number finite")
    return name, value
