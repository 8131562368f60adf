"""A query's `span(...)` group (pure): conditions that ONE span of the trace must all meet, such as
`span(model:gpt-4o error latency>2s)` for "a gpt-4o call that failed after more than 2 s",
where `error model:gpt-4o latency>2s` would keep a trace whose tool failed while its gpt-4o
call succeeded.

Inside the group: `model:`, `name:`, `kind:` (llm, retrieval, tool, agent, chain), `error` or
`ok` (`status:`), `latency>` and `latency<`. One group per query. A server that offers the
`span_` filters answers it exactly; on loaded rows, which carry no spans, a group can only be
judged by what it implies of its trace (`fits_trace`: the trace failed, used the model, lasted
at least as long), which the list says.
"""

from __future__ import annotations

from typing import Any

from tui.model.query_words import (
    COMPARISON,
    FIELD,
    QueryError,
    duration_text,
    latency_of,
    unquote,
    words_of,
    written,
)

KINDS = ("llm", "retrieval", "tool", "agent", "chain")
STATUS_WORDS = {"error": "error", "errors": "error", "failed": "error", "ok": "ok"}
OPEN = "span("
EXAMPLE = "span(model:gpt-4o error latency>2s)"
TAKES = "span(…) takes model:, name:, kind:, error or ok, latency> and latency<"
LABELS = {
    "span_model": "span(model:)",
    "span_name": "span(name:)",
    "span_kind": "span(kind:)",
    "span_status": "span(…)'s status",
    "span_min_latency_ms": "span(latency>)",
    "span_max_latency_ms": "span(latency<)",
}


def split_span(text: str) -> tuple[str, str | None]:
    """`text` without its `span(...)` group (a space in its place), and what the group holds
    (None: no group). A group starts a word, outside quotes; QueryError if it is not closed or
    there are two."""
    found: tuple[int, int] | None = None
    quoted = False
    at = 0
    while at < len(text):
        char = text[at]
        if char == '"':
            quoted = not quoted
        elif (
            not quoted
            and text[at : at + len(OPEN)].lower() == OPEN
            and (at == 0 or text[at - 1].isspace())
        ):
            if found is not None:
                raise QueryError(
                    "one span(…) per query: every condition inside it is of the same span"
                )
            end = _closing(text, at + len(OPEN))
            found = (at, end)
            at = end
        at += 1
    if found is None:
        return text, None
    start, end = found
    return text[:start] + " " + text[end + 1 :], text[start + len(OPEN) : end]


def _closing(text: str, at: int) -> int:
    """Where the group opened before `at` closes (its `)` outside quotes)."""
    quoted = False
    for index in range(at, len(text)):
        char = text[index]
        if char == '"':
            quoted = not quoted
        elif char == ")" and not quoted:
            return index
        elif char == "(" and not quoted:
            raise QueryError(f"span(…) holds no parentheses: write {EXAMPLE}")
    raise QueryError(f"span( is not closed: write {EXAMPLE}")


def parse_span(inside: str) -> dict[str, Any]:
    """The TraceFilter fields a group's inside says; QueryError for anything it cannot read."""
    found: dict[str, Any] = {}

    def put(field: str, value: Any, word: str) -> None:
        if field in found and found[field] != value:
            raise QueryError(f"{word}: {LABELS[field]} is given twice")
        found[field] = value

    for word in words_of(inside):
        plain, quoted = unquote(word)
        comparison = None if quoted else COMPARISON.match(word)
        field = None if comparison or word.startswith('"') else FIELD.match(word)
        if comparison:
            name, operator, value = comparison.groups()
            if name.lower() == "cost" or operator == "=":
                raise QueryError(f"{word}: {TAKES}")
            bound = "span_min_latency_ms" if operator.startswith(">") else "span_max_latency_ms"
            put(bound, latency_of(word, value), word)
        elif field:
            name, raw = field.groups()
            value, _ = unquote(raw)
            name = name.lower()
            if not value:
                raise QueryError(f"{word} needs a value ({name}:something)")
            if name in ("model", "name"):
                put(f"span_{name}", value, word)
            elif name == "kind":
                if value.lower() not in KINDS:
                    raise QueryError(f"{word}: a span's kind is {', '.join(KINDS)}")
                put("span_kind", value.lower(), word)
            elif name == "status" and value.lower() in STATUS_WORDS:
                put("span_status", STATUS_WORDS[value.lower()], word)
            else:
                raise QueryError(f"{word}: {TAKES}")
        elif not quoted and plain.lower() in STATUS_WORDS:
            put("span_status", STATUS_WORDS[plain.lower()], word)
        else:
            raise QueryError(f"{word}: {TAKES}")
    if not found:
        raise QueryError(f"span() is empty: put what the one span must be inside, {EXAMPLE}")
    low, high = found.get("span_min_latency_ms"), found.get("span_max_latency_ms")
    if low is not None and high is not None and low > high:
        raise QueryError("span(latency>) is above span(latency<): no span can match")
    return found


def format_span(query: Any) -> str:
    """The group that reads back as `query`'s span conditions ("" for none)."""
    parts: list[str] = []
    for word, value in (
        ("model", query.span_model),
        ("name", query.span_name),
        ("kind", query.span_kind),
    ):
        if value is not None:
            # A parenthesis ends or breaks the group unless it is quoted.
            shown = f'"{value}"' if "(" in value or ")" in value else written(value)
            parts.append(f"{word}:{shown}")
    if query.span_status is not None:
        parts.append(query.span_status)
    if query.span_min_latency_ms is not None:
        parts.append(f"latency>{duration_text(query.span_min_latency_ms)}")
    if query.span_max_latency_ms is not None:
        parts.append(f"latency<{duration_text(query.span_max_latency_ms)}")
    return f"span({' '.join(parts)})" if parts else ""


def fits_trace(trace: Any, query: Any) -> bool:
    """Whether a loaded row may hold a span meeting `query`'s group: what the group implies of
    its trace (a failed span fails its trace, its model is among the trace's, no span lasts
    longer than its trace). A row that carries no models is not judged by the model."""
    if query.span_status == "error" and not trace.is_error:
        return False
    models = getattr(trace, "models", None)
    if query.span_model is not None and isinstance(models, (dict, list)):
        names = {name.casefold() for name in models if isinstance(name, str)}
        if query.span_model.casefold() not in names:
            return False
    low = query.span_min_latency_ms
    duration = trace.duration_ms
    return low is None or (duration is not None and duration >= low)
