"""The trace list's query line: text such as
`error model:gpt-4o latency>2s cost>0.01 user:alice tag:prod sort:-latency "refund"` read into a
TraceFilter (`parse_query`) and written back (`format_query`); applied to loaded rows, for a
server that does not filter, by tui/model/query_rows.py.

The language, word by word (whitespace apart; a "quoted phrase" is one word):
- `error` / `ok` (or `status:error`, `status:ok`): the trace failed / did not;
- `model:`, `name:`, `user:`, `session:` and `tag:` (repeatable) take a value, quoted if it has
  spaces; values are exact (model and name case-insensitive, as the server reads them);
- `latency>2s`, `latency<500ms` (units ms, s, m; bounds inclusive, `>=` and `<=` read the same),
  `cost>0.01` (or `cost>$0.01`);
- `sort:latency` (ascending) or `sort:-latency` (descending), by start, latency, cost or tokens;
- `input:"…"` and `output:"…"` (repeatable): text in the trace's inputs only, outputs only;
- `span(model:gpt-4o error latency>2s)`: conditions ONE span must all meet (span_query.py);
- the annotations' terms (tui/model/annotation_query.py), each repeatable: `has:note` (an
  annotation of that name on the trace or a span), `label:root_cause=retriever`,
  `score:correctness<0.5` (or `<=`, `>`, `>=`);
- any other word or "phrase": text the trace must contain (its inputs, outputs, names, errors).
Anything else is a QueryError whose message says what is wrong and what is meant instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from tui.api.models import TraceFilter
from tui.model.annotation_query import TERMS, TermError, read_term, term_words
from tui.model.query_words import (
    COMPARISON,
    FIELD,
    cost_of,
    duration_text,
    latency_of,
    ms_text,
    unquote,
    words_of,
    written,
)
from tui.model.query_words import (
    QueryError as QueryError,
)
from tui.model.span_query import LABELS as SPAN_LABELS
from tui.model.span_query import format_span, parse_span, split_span

# The service's text index matches words of three characters or more: a query with a shorter
# word filters the loaded rows instead.
MIN_WORD = 3

STATUS_WORDS = {"error": "error", "errors": "error", "failed": "error", "ok": "ok"}
VALUE_FIELDS = {  # query word -> TraceFilter field
    "model": "model",
    "name": "name",
    "user": "user_id",
    "session": "session_id",
    "tag": "tags",
    "status": "status",
    "sort": "sort",
    "input": "inputs",
    "output": "outputs",
}
REPEATABLE = ("tags", "inputs", "outputs")
SORT_NAMES = {
    "start": "started_at",
    "started": "started_at",
    "time": "started_at",
    "latency": "duration_ms",
    "duration": "duration_ms",
    "cost": "total_cost_usd",
    "tokens": "total_tokens",
}
SORT_WORDS = {"started_at": "start", "duration_ms": "latency", "total_cost_usd": "cost"}
SORT_WORDS["total_tokens"] = "tokens"
# What completion offers first: every field, as it is typed.
FIELD_WORDS = (
    "error",
    "ok",
    "model:",
    "name:",
    "user:",
    "session:",
    "tag:",
    "latency>",
    "latency<",
    "cost>",
    "sort:-latency",
    "sort:-cost",
    "sort:-tokens",
    "sort:start",
    "span(",
    "span(error",
    "input:",
    "output:",
    "has:note",
    "label:",
    "score:",
)
LABELS = {
    "status": "the status",
    "model": "model:",
    "name": "name:",
    "user_id": "user:",
    "session_id": "session:",
    "tags": "tag:",
    "min_latency_ms": "latency>",
    "max_latency_ms": "latency<",
    "min_cost_usd": "cost>",
    "sort": "sort:",
    "order": "sort:",
    "inputs": "input:",
    "outputs": "output:",
    "span": "span(…)",
    **SPAN_LABELS,
    "annotations": "has:",
    "labels": "label:",
    "scores": "score:",
}
KNOWN = (
    "status, model, name, user, session, tag, latency, cost, sort, input, output, span(…),"
    " has, label, score"
)


def _sort(word: str, value: str) -> tuple[str, str]:
    order = "desc" if value.startswith("-") else "asc"
    key = SORT_NAMES.get(value.lstrip("+-").lower())
    if key is None:
        raise QueryError(
            f"{word}: sort by start, latency, cost or tokens (sort:-latency is slowest first)"
        )
    return key, order


def _text_term(word: str, quoted: bool) -> str:
    """A word of text as the server's `q` holds it: a phrase with spaces keeps its quotes."""
    if not word:
        raise QueryError('"": an empty phrase finds nothing; put words between the quotes')
    return f'"{word}"' if quoted and re.search(r"\s", word) else word


def parse_query(text: str) -> TraceFilter:
    """The TraceFilter a query line says; QueryError (only) for anything it cannot read."""
    found: dict[str, Any] = {}
    listed: dict[str, list[str]] = {field: [] for field in REPEATABLE}
    terms: list[str] = []
    text, span_inside = split_span(text)
    if span_inside is not None:
        found.update(parse_span(span_inside))
    # The annotation terms, each repeatable (TraceFilter's annotations, labels, scores).
    annotated: dict[str, list[Any]] = {"annotations": [], "labels": [], "scores": []}

    def put(field: str, value: Any, word: str) -> None:
        if field in found and found[field] != value:
            raise QueryError(f"{word}: {LABELS[field]} is given twice")
        found[field] = value

    for word in words_of(text):
        plain, quoted = unquote(word)
        comparison = None if quoted else COMPARISON.match(word)
        field = None if comparison else FIELD.match(word)
        if comparison:
            name, operator, value = comparison.groups()
            name = name.lower()
            if operator == "=":
                raise QueryError(f"{word}: use {name}> or {name}< (bounds are inclusive)")
            if name == "cost":
                if operator.startswith("<"):
                    raise QueryError(f"{word}: a cost takes a lower bound only (cost>0.01)")
                put("min_cost_usd", cost_of(word, value), word)
            else:
                bound = "min_latency_ms" if operator.startswith(">") else "max_latency_ms"
                put(bound, latency_of(word, value), word)
        elif field and not word.startswith('"'):
            name, raw = field.groups()
            value, _ = unquote(raw)
            key = VALUE_FIELDS.get(name.lower())
            if name.lower() in TERMS:
                if not value:
                    raise QueryError(f"{word} needs a value ({name}:something)")
                try:
                    kind, term = read_term(word, name.lower(), value)
                except TermError as error:
                    raise QueryError(str(error)) from None
                if term not in annotated[kind]:
                    annotated[kind].append(term)
                continue
            if key is None:
                raise QueryError(
                    f"{name}: is not a field (the fields are {KNOWN}); "
                    f'to search for the text, quote it: "{plain}"'
                )
            if not value:
                raise QueryError(f"{word} needs a value ({name}:something)")
            if key in REPEATABLE:
                if value not in listed[key]:
                    listed[key].append(value)
            elif key == "status":
                status = STATUS_WORDS.get(value.lower())
                if status is None:
                    raise QueryError(f"{word}: a status is ok or error")
                put("status", status, word)
            elif key == "sort":
                sort, order = _sort(word, value)
                put("sort", sort, word)
                put("order", order, word)
            else:
                put(key, value, word)
        elif not quoted and word.lower() in STATUS_WORDS:
            put("status", STATUS_WORDS[word.lower()], word)
        else:
            term = _text_term(plain, quoted)
            if term not in terms:
                terms.append(term)
    if (
        found.get("min_latency_ms") is not None
        and found.get("max_latency_ms") is not None
        and found["min_latency_ms"] > found["max_latency_ms"]
    ):
        raise QueryError("latency> is above latency<: no trace can match")
    return TraceFilter(
        **found,
        q=" ".join(terms) or None,
        tags=tuple(listed["tags"]),
        inputs=tuple(listed["inputs"]),
        outputs=tuple(listed["outputs"]),
        annotations=tuple(annotated["annotations"]),
        labels=tuple(annotated["labels"]),
        scores=tuple(annotated["scores"]),
    )


def text_terms(q: str | None) -> list[str]:
    """The words and "phrases" of a `q` (quotes dropped)."""
    return [unquote(word)[0] for word in words_of(q or "")]


def format_query(query: TraceFilter) -> str:
    """The query line that reads back as `query`."""
    parts: list[str] = []
    if query.status:
        parts.append(query.status)
    for word, value in (
        ("model", query.model),
        ("name", query.name),
        ("user", query.user_id),
        ("session", query.session_id),
    ):
        if value is not None:
            parts.append(f"{word}:{written(value)}")
    parts += [f"tag:{written(tag)}" for tag in query.tags]
    parts += [f"input:{written(text)}" for text in query.inputs]
    parts += [f"output:{written(text)}" for text in query.outputs]
    group = format_span(query)
    if group:
        parts.append(group)
    if query.min_latency_ms is not None:
        parts.append(f"latency>{duration_text(query.min_latency_ms)}")
    if query.max_latency_ms is not None:
        parts.append(f"latency<{duration_text(query.max_latency_ms)}")
    if query.min_cost_usd is not None:
        parts.append(f"cost>{ms_text(query.min_cost_usd)}")
    parts += term_words(query, written)
    if query.sort is not None:
        sign = "-" if query.order == "desc" else ""
        parts.append(f"sort:{sign}{SORT_WORDS.get(query.sort, query.sort)}")
    for term in text_terms(query.q):
        special = (
            term.lower() in STATUS_WORDS
            or FIELD.match(term)
            or COMPARISON.match(term)
            or re.search(r'[\s"]', term)
            or term.lower().startswith("span(")
        )
        parts.append(f'"{term}"' if special else term)
    return " ".join(parts)


def completions(seen: Mapping[str, Iterable[str]]) -> list[str]:
    """The words completion offers: the fields, then `field:value` for each value seen in the
    loaded rows (`seen`: field word -> values), quoted where they need it."""
    offered = list(FIELD_WORDS)
    for field, values in seen.items():
        offered += [f"{field}:{written(value)}" for value in sorted(set(values)) if value]
    return offered
