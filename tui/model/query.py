"""The trace list's query line: text such as
`error model:gpt-4o latency>2s cost>0.01 user:alice tag:prod sort:-latency "refund"` read into a
TraceFilter (`parse_query`), written back (`format_query`), and applied to loaded rows for a
server that does not filter (`matches`, `sort_rows`).

The language, word by word (whitespace apart; a "quoted phrase" is one word):
- `error` / `ok` (or `status:error`, `status:ok`): the trace failed / did not;
- `model:`, `name:`, `user:`, `session:` and `tag:` (repeatable) take a value, quoted if it has
  spaces; values are exact (model and name case-insensitive, as the server reads them);
- `latency>2s`, `latency<500ms` (units ms, s, m; bounds inclusive, `>=` and `<=` read the same),
  `cost>0.01` (or `cost>$0.01`);
- `sort:latency` (ascending) or `sort:-latency` (descending), by start, latency, cost or tokens;
- `input:"…"` and `output:"…"` (repeatable): text in the trace's inputs only, outputs only;
- `span(model:gpt-4o error latency>2s)`: conditions ONE span must all meet (span_query.py);
- any other word or "phrase": text the trace must contain (its inputs, outputs, names, errors).
Anything else is a QueryError whose message says what is wrong and what is meant instead.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from tui.api.models import TraceFilter
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
from tui.model.span_query import fits_trace, format_span, parse_span, split_span

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
}
KNOWN = "status, model, name, user, session, tag, latency, cost, sort, input, output, span(…)"


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


# -- applied to loaded rows, for a server that does not filter -------------------------------


def loaded_row_text(trace: Any) -> str:
    """The text a loaded list row offers a text search, casefolded: its name, id, status, error
    and previews (the server searches the whole trace's text; a row carries only these)."""
    fields = (
        trace.name,
        trace.id,
        trace.status,
        trace.error_message,
        trace.input_preview,
        getattr(trace, "output_preview", None),
    )
    return " ".join(str(value) for value in fields if value).casefold()


def _models_of(trace: Any) -> set[str]:
    models = getattr(trace, "models", None)
    names: Iterable[Any] = models if isinstance(models, (dict, list)) else ()
    return {name.casefold() for name in names if isinstance(name, str)}


# What a loaded row must carry for a condition on it to be judged: a server that never sends a
# row's models (the local service lists them only when asked) or users cannot have its rows
# judged by them, only its own filter can.
CARRIED: dict[str, Callable[[Any], bool]] = {
    "model": lambda trace: getattr(trace, "models", None) is not None,
    "user_id": lambda trace: getattr(trace, "user_id", None) is not None,
    "session_id": lambda trace: getattr(trace, "session_id", None) is not None,
    "tags": lambda trace: bool(getattr(trace, "tags", None)),
    "inputs": lambda trace: getattr(trace, "input_preview", None) is not None,
    "outputs": lambda trace: getattr(trace, "output_preview", None) is not None,
}


def unjudged(query: TraceFilter, rows: Sequence[Any]) -> tuple[str, ...]:
    """The conditions of `query` (TraceFilter fields) that no row of `rows` carries what it
    takes to judge; () when there are no rows. "span": a span(…) group, which rows (no spans)
    judge only by what it implies of the trace (span_query.fits_trace)."""
    if not rows:
        return ()
    asked = [field for field in CARRIED if getattr(query, field)]
    found = tuple(field for field in asked if not any(map(CARRIED[field], rows)))
    return (*found, "span") if query.has_span else found


def matches(
    trace: Any, query: TraceFilter, text: str | None = None, skip: Collection[str] = ()
) -> bool:
    """Whether a loaded trace passes the filter (the sort aside), the conditions named in `skip`
    (TraceFilter fields, see `unjudged`) aside. `text`: its loaded_row_text, when the caller
    keeps one."""
    if query.status is not None and trace.is_error != (query.status == "error"):
        return False
    if query.name is not None and (trace.name or "").casefold() != query.name.casefold():
        return False
    if (
        query.model is not None
        and "model" not in skip
        and query.model.casefold() not in _models_of(trace)
    ):
        return False
    if (
        query.user_id is not None
        and "user_id" not in skip
        and getattr(trace, "user_id", None) != query.user_id
    ):
        return False
    if (
        query.session_id is not None
        and "session_id" not in skip
        and getattr(trace, "session_id", None) != query.session_id
    ):
        return False
    if (
        query.tags
        and "tags" not in skip
        and not set(query.tags) <= set(getattr(trace, "tags", None) or ())
    ):
        return False
    if query.has_span and not fits_trace(trace, query):
        return False
    for field, preview in (("inputs", "input_preview"), ("outputs", "output_preview")):
        wanted = getattr(query, field)
        if wanted and field not in skip:
            # A row carries the start of one input and one output: the server searches them all.
            shown = (getattr(trace, preview, None) or "").casefold()
            if not all(text.casefold() in shown for text in wanted):
                return False
    duration = trace.duration_ms
    if query.min_latency_ms is not None and (duration is None or duration < query.min_latency_ms):
        return False
    if query.max_latency_ms is not None and (duration is None or duration > query.max_latency_ms):
        return False
    cost = trace.total_cost_usd
    if query.min_cost_usd is not None and (cost is None or cost < query.min_cost_usd):
        return False
    if query.q:
        haystack = text if text is not None else loaded_row_text(trace)
        return all(term in haystack for term in _folded_terms(query.q))
    return True


@functools.lru_cache(maxsize=64)
def _folded_terms(q: str) -> tuple[str, ...]:
    """A `q`'s terms, casefolded: read once for the rows a filter is matched against, not once
    a row (50,000 rows: 0.3 s of it)."""
    return tuple(term.casefold() for term in text_terms(q))


def _started(trace: Any) -> float | None:
    return trace.started_at.timestamp() if trace.started_at else None


_SORT_VALUES: dict[str, Callable[[Any], float | None]] = {
    "started_at": _started,
    "duration_ms": lambda t: t.duration_ms,
    "total_cost_usd": lambda t: t.total_cost_usd,
    "total_tokens": lambda t: t.total_tokens,
}


def sort_rows(rows: Sequence[Any], sort: str, order: str | None) -> list[Any]:
    """Rows ordered by a sort key, as the server would (ties by id); rows without the value
    last either way."""
    value_of = _SORT_VALUES.get(sort, _SORT_VALUES["started_at"])
    sign = -1 if (order or "desc") == "desc" else 1
    known = [(value_of(row), row) for row in rows]
    present = [(value, row) for value, row in known if value is not None]
    present.sort(key=lambda pair: (sign * pair[0], pair[1].id or ""))
    return [row for _, row in present] + [row for value, row in known if value is None]


def completions(seen: Mapping[str, Iterable[str]]) -> list[str]:
    """The words completion offers: the fields, then `field:value` for each value seen in the
    loaded rows (`seen`: field word -> values), quoted where they need it."""
    offered = list(FIELD_WORDS)
    for field, values in seen.items():
        offered += [f"{field}:{written(value)}" for value in sorted(set(values)) if value]
    return offered
