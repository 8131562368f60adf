"""The trace rows of a batch's traces, summed from the batch's spans alone.

Exporters send whole traces, so most traces of a batch are new, and their rows are these sums:
worked out where the body is decoded (a worker process, or a thread of the service), not in
the store's write transaction, which then only inserts them. A trace already stored is
recomputed by the store from all its spans instead (store/sql.py upsert_traces, by the same
rules: a test checks that both agree).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from tui.server.ingest.associations import Associations, associations_in, combine
from tui.server.ingest.preview import (
    MAX_PARSED,
    output_preview_in,
    preview_in,
    preview_of,
)
from tui.server.search.text import searched_text
from tui.server.store.rows import SpanRow, TraceRow, TraceSums

# A span's cost_source when its model has no price (ingest/conventions.py): its cost is not 0
# but unknown. A span counted once in its parent has cost_source None, so it never counts.
UNPRICED = "unknown_model"


def summarize(
    spans: Sequence[SpanRow], attributes: Sequence[dict[str, Any]] | None = None
) -> list[TraceSums]:
    """One TraceSums per trace of `spans`, in order of first appearance. A span id seen twice
    counts once, its last version. Named after the earliest root (no parent), else the
    earliest span; the preview is a root's input, else the first span's that has one, read from
    `attributes` (each span's, as decoded) when given, else from each span's JSON. The user,
    session, tags, output preview, models and search text: see `extras`. Spans whose model has
    no price are counted (unpriced_spans)."""
    traces: dict[str, dict[str, int]] = {}
    for index, span in enumerate(spans):
        traces.setdefault(span.trace_id, {})[span.id] = index
    rows = []
    for trace_id, indexes in traces.items():
        members = [spans[i] for i in indexes.values()]
        start = min(s.started_at for s in members)
        end = max(s.started_at + s.duration_ms for s in members)
        roots = [s for s in members if s.parent_id is None]
        named = min(roots or members, key=lambda s: (s.started_at, s.id))
        decoded = None if attributes is None else [attributes[i] for i in indexes.values()]
        preview, from_root = next(previews(members, decoded), (None, False))
        errors = sum(s.status == "error" for s in members)
        unpriced = sum(s.cost_source == UNPRICED for s in members)
        more = extras(members, decoded)
        rows.append(
            TraceSums(
                trace_id,
                named.name,
                start,
                end - start,
                len(members),
                sum(s.input_tokens for s in members),
                sum(s.output_tokens for s in members),
                round(sum(s.cost_usd for s in members), 9),
                "error" if errors else "ok",
                errors,
                preview,
                from_root,
                *more,
                unpriced_spans=unpriced,
            )
        )
    return rows


def parsed(span: SpanRow, markers: tuple[str, ...] = ()) -> dict[str, Any] | None:
    """A span's attributes from its JSON (None when too big, not an object, or, given
    `markers`, holding none of them)."""
    text = span.attributes
    if len(text) > MAX_PARSED or (markers and not any(m in text for m in markers)):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # too deep for the parser
        return None
    return value if isinstance(value, dict) else None


def extras(
    spans: Sequence[SpanRow], attributes: Sequence[dict[str, Any]] | None = None
) -> tuple[str | None, str | None, tuple[str, ...], tuple[str, ...], bool, str | None, bool, str]:
    """A trace's TraceSums fields beyond the sums, from its spans (and their decoded
    `attributes`, else their JSON): user, session, tags, models, whether the user or session
    came from a root, the output preview (the root's output, else the last LLM span's),
    whether it is the root's, and the search text (roots first)."""
    if attributes is None:
        attributes = [parsed(s) or {} for s in spans]
    found: list[tuple[Associations, bool]] = []
    for span, decoded in zip(spans, attributes, strict=True):
        if len(span.attributes) <= MAX_PARSED:
            found.append((associations_in(decoded), span.parent_id is None))
    together, associations_from_root = combine(found)
    models = tuple(sorted({s.model.lower() for s in spans if s.model}))
    output, output_from_root = None, False
    for index, span in enumerate(spans):
        if span.parent_id is None and len(span.attributes) <= MAX_PARSED:
            output = output_preview_in(attributes[index])
            if output:
                output_from_root = True
                break
    if not output:
        ordered = sorted(range(len(spans)), key=lambda i: (spans[i].started_at, spans[i].id))
        for index in reversed(ordered):
            span = spans[index]
            if span.kind == "llm" and len(span.attributes) <= MAX_PARSED:
                output = output_preview_in(attributes[index])
                if output:
                    break
    order = sorted(range(len(spans)), key=lambda i: spans[i].parent_id is not None)
    text = searched_text(
        (
            spans[i].name,
            spans[i].error_message,
            attributes[i] if len(spans[i].attributes) <= MAX_PARSED else None,
        )
        for i in order
    )
    return (
        together.user_id,
        together.session_id,
        together.tags,
        models,
        associations_from_root,
        output or None,
        output_from_root,
        text,
    )


def previews(
    spans: Sequence[SpanRow], attributes: Sequence[dict[str, Any]] | None = None
) -> Iterator[tuple[str, bool]]:
    """(preview, from a root) of `spans`: a root's first, then each other span's in order."""
    for roots in (True, False):
        for index, span in enumerate(spans):
            if (span.parent_id is None) != roots:
                continue
            if attributes is None:
                found = preview_of(span.attributes)
            elif len(span.attributes) <= MAX_PARSED:  # as preview_of: huge spans are not read
                found = preview_in(attributes[index])
            else:
                found = None
            if found:
                yield found, roots


def trace_rows(sums: Iterable[TraceSums], project_id: str, attributes: str) -> list[TraceRow]:
    """New traces' rows from their batch's sums, in `project_id` with the resource's
    `attributes` (JSON text)."""
    return [
        TraceRow(
            t.id,
            project_id,
            t.name,
            t.started_at,
            t.duration_ms,
            t.span_count,
            t.input_tokens,
            t.output_tokens,
            t.total_cost_usd,
            t.status,
            t.error_count,
            attributes,
            t.started_at,
            t.input_preview,
            t.user_id,
            t.session_id,
            json_list(t.tags),
            t.output_preview,
            json_list(t.models),
            t.unpriced_spans,
        )
        for t in sums
    ]


def json_list(values: Iterable[str]) -> str:
    """Tags or models as stored: a compact JSON list."""
    return json.dumps(list(values), separators=(",", ":"), ensure_ascii=False)


def derived(
    rows: list[TraceRow], spans: Sequence[SpanRow]
) -> tuple[list[TraceRow], list[tuple[str, str, str]]]:
    """Bulk-inserted traces (demo data, tests) with what ingest reads from their spans filled
    in where a row leaves it out (user, session, tags, output preview, models, unpriced
    spans), and each trace's search text as (project_id, trace_id, text)."""
    by_trace: dict[str, list[SpanRow]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    filled = []
    texts = []
    for row in rows:
        members = by_trace.get(row.id)
        if not members:
            filled.append(row)
            continue
        (sums,) = summarize(members)
        filled.append(
            row._replace(
                user_id=row.user_id or sums.user_id,
                session_id=row.session_id or sums.session_id,
                tags=row.tags if row.tags != "[]" else json_list(sums.tags),
                output_preview=row.output_preview or sums.output_preview,
                models=row.models if row.models != "[]" else json_list(sums.models),
                unpriced_spans=row.unpriced_spans or sums.unpriced_spans,
            )
        )
        if sums.search_text:
            texts.append((row.project_id, row.id, sums.search_text))
    return filled, texts
