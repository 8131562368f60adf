"""Pure (no Textual): the whole diff as JSON-ready data, for `tracetui diff --json`.

One object: the two traces (id, name, project, start, duration, status), the summary's
sentences (names in backticks), the counts of each status, and every aligned pair in display
order with its `status` (same, changed, added, removed), the span's `name`, its `path` from
the root (each step's name and ordinal among same-named siblings), its depth, both span ids,
what changed, and the deltas of duration, tokens and cost (B less A; a missing side counts as
nothing). Strings are the servers' as they came: JSON escapes what needs escaping.
"""

from __future__ import annotations

from typing import Any

from tui.api.models import Trace
from tui.model.diff.align import MISSING
from tui.model.diff.deltas import MODEL, STATUS, TraceDiff
from tui.model.diff.summary import Sentence, plain

SCHEMA = 1


def trace_facts(trace: Trace) -> dict[str, Any]:
    return {
        "id": trace.id,
        "name": trace.name,
        "project_id": trace.project_id,
        "started_at": trace.started_at.isoformat() if trace.started_at else None,
        "duration_ms": trace.duration_ms,
        "status": "error" if trace.is_error else "ok",
    }


def pair_json(diff: TraceDiff, row: int) -> dict[str, Any]:
    rows = diff.rows
    i, j = rows.a_pos[row], rows.b_pos[row]
    changes = diff.changes[row]
    out: dict[str, Any] = {
        "status": diff.status[row],
        "name": diff.name(row),
        "path": [{"name": name, "ordinal": ordinal} for name, ordinal in diff.path(row)],
        "depth": rows.depth[row],
        "a_span_id": diff.a.tree.keys[i] if i != MISSING else None,
        "b_span_id": diff.b.tree.keys[j] if j != MISSING else None,
        "changes": list(changes),
        "deltas": {
            "duration_ms": diff.delta("durations", row),
            "input_tokens": diff.delta("inputs", row),
            "output_tokens": diff.delta("outputs", row),
            "cost_usd": diff.delta("costs", row),
        },
    }
    if MODEL in changes:
        out["model"] = {"a": diff.a.models[i], "b": diff.b.models[j]}
    if STATUS in changes or diff.b_error(row):
        out["error"] = diff.b.error_messages[j] if j != MISSING else None
    return out


def diff_json(
    diff: TraceDiff,
    a: Trace,
    b: Trace,
    sentences: list[Sentence],
    chosen: str | None = None,
) -> dict[str, Any]:
    """The diff of `a` and `b` as one JSON object; `chosen`: how A was found, when it was."""
    return {
        "schema": SCHEMA,
        "a": trace_facts(a),
        "b": trace_facts(b),
        "a_chosen": chosen,
        "summary": [plain(s) for s in sentences],
        "counts": dict(diff.counts),
        "pairs": [pair_json(diff, row) for row in range(diff.size)],
    }
