"""Keyset paging does the same work for a late page as for the first (counted, not timed)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.support.builders import add_bulk_traces
from tui.server.store.rows import TracePosition
from tui.server.store.sqlite.store import WAL_AUTOCHECKPOINT_PAGES, Store

NOW = 1_795_000_000_000


def vm_steps(store: Store, after: TracePosition | None) -> int:
    """SQLite virtual-machine instructions spent on one page (a deterministic cost measure)."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    db = store._connection()
    db.set_progress_handler(count, 1)
    try:
        rows, _ = store.list_traces("p", 0, NOW + 1, 100, after)
    finally:
        db.set_progress_handler(None, 1)
    assert len(rows) == 100
    return steps


def test_a_late_page_costs_what_the_first_costs(tmp_path: Path) -> None:
    store = Store(tmp_path / "paging.sqlite3")
    with store.transaction() as db:
        store.insert_project(db, "p", None, 30, project_id="p")
    add_bulk_traces(store, "p", 20_000, NOW, span=86_400_000)
    oldest = (
        store._connection()
        .execute("SELECT started_at, id FROM traces ORDER BY started_at LIMIT 1 OFFSET 150")
        .fetchone()
    )
    first = vm_steps(store, None)
    late = vm_steps(store, TracePosition(oldest[0], oldest[1]))
    # Scanning the 19,850 rows before the cursor would cost over 100x more.
    assert late < 2 * first, (first, late)


def test_spliced_span_json_equals_the_plain_encoding(store: Any) -> None:
    # `store`: either backend (tests/service/conftest.py).
    import json
    import random

    from tui.demo.data import TraceBuilder
    from tui.server.http.schemas import span_json, spans_json_text

    b = TraceBuilder(random.Random(1), "t1")
    attributes = [{}, {"a": [1, {"b": '漢字 \\u2028 "q"'}]}, {"x": None, "y": 1.5}]
    for i, attrs in enumerate(attributes):
        b.add(
            None if i == 0 else "s0",
            f"span {i} \x1b[2J",
            "llm",
            NOW + i,
            5,
            "gpt-4o",
            (1, 2),
            attrs,
            error="boom" if i == 2 else None,
            span_id=f"s{i}",
        )
    with store.transaction() as db:
        store.insert_traces(db, [], b.rows, project_id="p")
    rows = store.list_spans("t1", "p")
    assert json.loads(spans_json_text(rows, "t1")) == [span_json(r, "t1") for r in rows]


def test_the_log_file_shrinks_back_after_a_big_transaction(tmp_path: Path) -> None:
    # SQLite reuses the log's file when the log starts again; journal_size_limit (connect)
    # shrinks it back to a checkpoint's worth at the first commit after.
    store = Store(tmp_path / "big.sqlite3")
    log = Path(f"{store.path}-wal")
    with store.transaction() as db:
        db.execute("CREATE TABLE filler (blob BLOB)")
        db.executemany("INSERT INTO filler VALUES (?)", [(os.urandom(1 << 20),) for _ in range(48)])
    assert log.stat().st_size > 48 << 20
    # Everything copied (not truncated, as Store.checkpoint would a log this big): the next
    # writer starts the log again, in the same big file.
    store._connection().execute("PRAGMA wal_checkpoint(PASSIVE)")
    with store.transaction() as db:
        db.execute("INSERT INTO filler VALUES (x'00')")
    assert log.stat().st_size <= (WAL_AUTOCHECKPOINT_PAGES + 16) * 4096
