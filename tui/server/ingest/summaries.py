"""The trace rows of a batch's traces, summed from the batch's spans alone.

Exporters send whole traces, so most traces of a batch are new, and their rows are these sums:
worked out where the body is decoded (a decoder process), not by the one writer thread, which
then only inserts them. A trace already stored is recomputed by the store from all its spans
instead (UPSERT_TRACES, by the same rules: a test checks that both agree).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from tui.server.ingest.preview import preview_of
from tui.server.rows import SpanRow, TraceSums


def summarize(spans: Iterable[SpanRow]) -> list[TraceSums]:
    """One TraceSums per trace of `spans`, in order of first appearance. A span id seen twice
    counts once, its last version. Named after the earliest root (no parent), else the
    earliest span; the preview is a root's input, else the first span's that has one."""
    traces: dict[str, dict[str, SpanRow]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, {})[span.id] = span
    rows = []
    for trace_id, by_id in traces.items():
        members = by_id.values()
        start = min(s.started_at for s in members)
        end = max(s.started_at + s.duration_ms for s in members)
        roots = [s for s in members if s.parent_id is None]
        named = min(roots or members, key=lambda s: (s.started_at, s.id))
        preview, from_root = next(previews(members), (None, False))
        errors = sum(s.status == "error" for s in members)
        rows.append(
            TraceSums(
                trace_id,
                named.name,
                start,
                end - start,
                len(by_id),
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


def previews(spans: Iterable[SpanRow]) -> Iterator[tuple[str, bool]]:
    """(preview, from a root) of `spans`: a root's first, then each other span's in order."""
    spans = list(spans)
    for span in spans:
        if span.parent_id is None and (found := preview_of(span.attributes)):
            yield found, True
    for span in spans:
        if span.parent_id is not None and (found := preview_of(span.attributes)):
            yield found, False
