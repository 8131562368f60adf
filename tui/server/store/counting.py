"""Each model call counted once across exports, on both stores: the rule of
conventions.counted_in_parents applied to a stored trace's spans when a batch adds to it.

A call recorded by two nested spans (an SDK's own span below an instrumentation's) may come in
two exports, in either order: the inner span, which ends first, often goes first. So when a
batch's model-call spans join a trace stored before, the trace's model-call spans that report
tokens (or carry the mark `tracetui.counted_in` naming their parent: they reported them) are
read, the rule says which of them are counted in their parent, and the store brings the spans
to that state: a span newly counted in its parent gets its tokens and cost set to 0 and the
mark; a span counted before whose parent has since shown a second child reporting tokens (so
the children are calls of their own) gets back what it reported, read again from its
attributes, kept as sent (conventions.facts), and loses the mark. Then the trace's totals are
recomputed from its spans (sql.upsert_traces), so the result is that of the same spans sent in
one export, whatever the order and however often a span is sent again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from tui.server.ingest.conventions import COUNTED_IN, counted_in_parents, facts
from tui.server.ingest.costs import PRICES
from tui.server.store.rows import SpanRow
from tui.server.store.tables import Tables


def marked(dialect_find: str) -> str:
    """SQL: the span's attributes carry the mark naming its parent (as the stores write it, or
    as PostgreSQL's jsonb writes it back after a log join, with spaces)."""
    return " OR ".join(
        f"{dialect_find}(attributes, '\"{COUNTED_IN}\":{space}\"' || parent_id || '\"') > 0"
        for space in ("", " ")
    )


def reporting_sql(dialect_find: str) -> str:
    """Project ?'s model-call spans in the traces of the list ? that report tokens or carry the
    mark (and so reported them): (trace_id, id, parent_id, whether counted in its parent now).
    The mark is looked for only in spans reporting no tokens: few, and it is a text search."""
    return f"""
SELECT trace_id, id, parent_id, CASE WHEN input_tokens > 0 OR output_tokens > 0 THEN 0 ELSE 1 END
FROM spans WHERE project_id = ? AND trace_id = ANY(?) AND kind = 'llm'
    AND (input_tokens > 0 OR output_tokens > 0
        OR (parent_id IS NOT NULL AND ({marked(dialect_find)})))
"""


# A span counted in its parent: its tokens and cost set to 0, the mark added last to its
# attributes (a JSON object as text), as conventions.with_mark adds it.
COUNT_IN_PARENT = f"""
UPDATE spans SET input_tokens = 0, output_tokens = 0, cost_usd = 0.0, cost_source = NULL,
    cache_read_tokens = 0, cache_write_tokens = 0, reasoning_tokens = 0,
    attributes = CASE WHEN substr(attributes, length(attributes)) <> '}}' THEN attributes
        ELSE substr(attributes, 1, length(attributes) - 1)
        || CASE WHEN attributes = '{{}}' THEN '' ELSE ',' END
        || '"{COUNTED_IN}":"' || parent_id || '"}}' END
WHERE project_id = ? AND trace_id = ? AND id = ?
"""
ATTRIBUTES_OF = "SELECT attributes FROM spans WHERE project_id = ? AND trace_id = ? AND id = ?"
COUNT_AGAIN = """
UPDATE spans SET input_tokens = ?, output_tokens = ?, cost_usd = ?, cost_source = ?,
    cache_read_tokens = ?, cache_write_tokens = ?, reasoning_tokens = ?, attributes = ?
WHERE project_id = ? AND trace_id = ? AND id = ?
"""


def without_mark(attributes: str, parent_id: str) -> str:
    """A span's attributes as sent: the mark naming `parent_id` taken out (the text as it was,
    where the mark is where the stores put it; else the JSON written again without it)."""
    for separator in ("", " "):
        mark = f'"{COUNTED_IN}":{separator}"{parent_id}"'
        if attributes == "{" + mark + "}":
            return "{}"
        head, found, tail = attributes.rpartition("," + separator + mark)
        if found:
            return head + tail
    try:
        value = json.loads(attributes)
    except ValueError:
        return attributes
    if isinstance(value, dict):
        value.pop(COUNTED_IN, None)
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return attributes


def reported(attributes: str) -> tuple[Any, ...]:
    """What a span's attributes (as sent) report: the columns a span counted in its parent
    had set to 0, in COUNT_AGAIN's order, read as ingest read them."""
    try:
        value = json.loads(attributes)
    except (ValueError, RecursionError):
        value = None
    found = facts(value if isinstance(value, dict) else {}, PRICES)
    return (
        found.input_tokens,
        found.output_tokens,
        found.cost_usd,
        found.cost_source,
        found.cache_read_tokens,
        found.cache_write_tokens,
        found.reasoning_tokens,
    )


def may_change_counts(spans: Iterable[SpanRow]) -> set[str]:
    """The traces among `spans` whose counting a batch can change: those it brings a
    model-call span to (one reporting tokens, or one sent again, which replaces itself)."""
    return {span.trace_id for span in spans if span.kind == "llm"}


class CallCounting(Tables):
    """The count-once rule over stored spans, in the caller's write transaction (under the
    traces' locks on PostgreSQL)."""

    def _count_calls_once(self, db: Any, project_id: str, trace_ids: list[str]) -> None:
        """Bring the model-call spans of project `project_id`'s `trace_ids` to the rule's
        state (module docstring); run before their totals are recomputed."""
        if not trace_ids:
            return
        rows = db.execute(
            self._sql(reporting_sql(self.dialect.find)),
            (project_id, self.dialect.values(trace_ids)),
        ).fetchall()
        reporting = {(trace_id, span_id): parent for trace_id, span_id, parent, _ in rows}
        now = {(trace_id, span_id) for trace_id, span_id, _, counted in rows if counted}
        target = counted_in_parents(reporting)
        counted = sorted(target - now)
        if counted:
            self._execute_many(
                db, self._sql(COUNT_IN_PARENT), [(project_id, *key) for key in counted]
            )
        again = []
        for trace_id, span_id in sorted(now - target):
            (attributes,) = db.execute(
                self._sql(ATTRIBUTES_OF), (project_id, trace_id, span_id)
            ).fetchone()
            as_sent = without_mark(attributes, reporting[(trace_id, span_id)] or "")
            again.append((*reported(as_sent), as_sent, project_id, trace_id, span_id))
        if again:
            self._execute_many(db, self._sql(COUNT_AGAIN), again)
