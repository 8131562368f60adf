"""A new trace's row summed in Python from its batch (ingest.summaries) is the row that
upsert_traces (store/sql.py) computes in SQL from the stored spans: the two ways must never
drift apart."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tui.server.ingest.preview import MAX_PARSED
from tui.server.ingest.summaries import summarize
from tui.server.store.rows import SpanGroup, SpanRow
from tui.server.store.sql import upsert_traces_args
from tui.server.store.sqlite.sql import UPSERT_TRACES
from tui.server.store.sqlite.store import Store

NOW = 1_795_000_000_000


def random_spans(rng: random.Random, traces: int) -> list[SpanRow]:
    """Spans of several traces in any order: with and without roots, errors, re-sent ids."""
    spans = []
    for t in range(traces):
        trace_id = f"{t:032x}"
        count = rng.randint(1, 12)
        has_root = rng.random() < 0.7
        for s in range(count):
            parent = None if (s == 0 and has_root) else f"{rng.randint(0, 99):016x}"
            spans.append(
                SpanRow(
                    trace_id,
                    f"{rng.randint(0, count):016x}",  # collisions: a re-sent span
                    parent,
                    rng.choice(["root", "llm", "tool", "retrieve"]),
                    "llm",
                    "gpt-4o",
                    NOW + rng.randint(0, 60_000),
                    rng.randint(0, 9_000),
                    rng.randint(0, 5_000),
                    rng.randint(0, 2_000),
                    round(rng.random() / 100, 9),
                    rng.choice(["ok", "ok", "ok", "error"]),
                    None,
                    "{}",
                    cost_source=rng.choice([None, "reported", "unknown_model"]),
                )
            )
    rng.shuffle(spans)
    return spans


@pytest.mark.parametrize("summed_by", ["decoder", "store"])
def test_a_batchs_new_traces_match_the_sql_recomputation(tmp_path: Path, summed_by: str) -> None:
    store = Store(tmp_path / "summaries.sqlite3")
    with store.transaction() as db:
        store.insert_project(db, "p", None, 30, project_id="p")
    spans = random_spans(random.Random(7), 60)
    resource = json.dumps({"service.name": "bench"})
    # Every trace is new: its row comes from its batch's sums (ingest.summaries).
    # As a decoder sends them (summed beside the decoding), or as other callers (the store sums).
    sums = summarize(spans) if summed_by == "decoder" else None
    store.ingest([[SpanGroup("p", None, resource, spans, sums)]])
    db = store._connection()
    by_python = db.execute("SELECT * FROM traces ORDER BY id").fetchall()
    assert len(by_python) == 60
    ids = json.dumps([row[0] for row in by_python])
    with store.transaction() as db:
        db.execute(UPSERT_TRACES, upsert_traces_args("p", resource, ids))
    by_sql = store._connection().execute("SELECT * FROM traces ORDER BY id").fetchall()
    assert by_sql == by_python


def test_previews_read_from_the_decoded_attributes_are_those_read_from_the_json() -> None:
    rng = random.Random(11)
    spans, decoded = [], []
    for span in random_spans(rng, 40):
        attributes: dict[str, object] = {}
        if rng.random() < 0.5:
            attributes["input.value"] = f"question {rng.randint(0, 999)}"
        if rng.random() < 0.3:
            attributes["llm.input_messages.0.message.role"] = "user"
            attributes["llm.input_messages.0.message.content"] = f"flat {rng.randint(0, 9)}"
        spans.append(span._replace(attributes=json.dumps(attributes)))
        decoded.append(attributes)
    from_json = summarize(spans)
    assert summarize(spans, decoded) == from_json
    assert sum(t.input_preview is not None for t in from_json) >= 20  # the test sees previews


def test_a_huge_span_has_no_preview_either_way() -> None:
    (span,) = random_spans(random.Random(3), 1)[:1]
    attributes = {"input.value": "q", "pad": "x" * MAX_PARSED}
    span = span._replace(attributes=json.dumps(attributes))
    assert summarize([span])[0].input_preview is None
    assert summarize([span], [attributes])[0].input_preview is None
