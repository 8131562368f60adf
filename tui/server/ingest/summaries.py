"""The trace rows of a batch's traces, summed from the batch's spans alone.

Exporters send whole traces, so most traces of a batch are new, and their rows are these sums:
worked out where the body is decoded (a decoder process), not by the one writer thread, which
then only inserts them. A trace already stored is recomputed by the store from all its spans
instead (UPSERT_TRACES, by the same rules: a test checks that both agree).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from tui.server.ingest.preview import MAX_PARSED, preview_in, preview_of
from tui.server.rows import SpanRow, TraceRow, TraceSums


def summarize(
    spans: Sequence[SpanRow], attributes: Sequence[dict[str, Any]] | None = None
) -> list[TraceSums]:
    """One TraceSums per trace of `spans`, in order of first appearance. A span id seen twice
    counts once, its last version. Named after the earliest root (no parent), else the
    earliest span; the preview is a root's input, else the first span's that has one, read from
    `attributes` (each span's, as decoded) when given, else from each span's JSON."""
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
            )
        )
    return rows


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
        )
        for t in sums
    ]
