"""Schema migrations: old databases open with every row intact, newer ones are refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.support.serve import run_tracetui
from tui.server.api_keys import hash_key
from tui.server.store.errors import SchemaTooNew
from tui.server.store.migrations import Migration
from tui.server.store.rows import SpanGroup, SpanRow
from tui.server.store.sqlite.migrations import (
    LATEST,
    MIGRATIONS,
    migrate,
    split_statements,
    user_version,
)
from tui.server.store.sqlite.store import Store

# The schema of tracetui before migrations existed, copied verbatim from store.py at b5e5490.
# Databases made with it have user_version 0. Never edit this copy: it stands for files that
# exist on users' disks.
OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS projects (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT,
    retention_days INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
-- project_id NULL marks the workspace key. Only the SHA-256 of a key is stored: keys are
-- long random strings, so a fast hash is enough and the plain key never touches the disk.
CREATE TABLE IF NOT EXISTS api_keys (
    key_hash TEXT PRIMARY KEY,
    project_id TEXT REFERENCES projects(id),
    label TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS traces (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    name TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    span_count INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    total_cost_usd REAL NOT NULL,
    status TEXT NOT NULL,
    error_count INTEGER NOT NULL,
    attributes TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS traces_by_project_time ON traces(project_id, started_at, id);
CREATE TABLE IF NOT EXISTS spans (
    trace_id TEXT NOT NULL,
    id TEXT NOT NULL,
    parent_id TEXT,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    model TEXT,
    started_at INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    status TEXT NOT NULL,
    error_message TEXT,
    attributes TEXT NOT NULL,
    PRIMARY KEY (trace_id, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS spans_by_trace_time ON spans(trace_id, started_at, id);
CREATE TABLE IF NOT EXISTS alerts (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    name TEXT NOT NULL,
    metric TEXT NOT NULL,
    condition TEXT NOT NULL,
    threshold REAL NOT NULL,
    webhook_url TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS alerts_by_project ON alerts(project_id, created_at);
-- Remembered responses to POSTs that carried an Idempotency-Key, so a retry never creates twice.
CREATE TABLE IF NOT EXISTS idempotency (
    key_hash TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (key_hash, idempotency_key)
);
"""

OLD_ROWS = [
    "INSERT INTO projects VALUES ('proj_a', 'A', 'first', 30, 1000)",
    "INSERT INTO projects VALUES ('proj_b', 'B', NULL, 7, 2000)",
    f"INSERT INTO api_keys VALUES ('{hash_key('ws-key')}', NULL, 'workspace', 1000)",
    f"INSERT INTO api_keys VALUES ('{hash_key('pk-key')}', 'proj_b', 'b key', 1001)",
    "INSERT INTO traces VALUES ('t1', 'proj_a', 'run', 5000, 40, 2, 10, 20, 0.25, 'error', 1,"
    ' \'{"user.id": "u_1", "input": "Where is\\nmy order?"}\')',
    "INSERT INTO spans VALUES ('t1', 's1', NULL, 'root', 'agent', NULL, 5000, 40, 0, 0, 0.0,"
    " 'ok', NULL, '{}')",
    "INSERT INTO spans VALUES ('t1', 's2', 's1', 'call', 'llm', 'gpt-4o', 5001, 30, 10, 20,"
    " 0.25, 'error', 'boom', '{\"llm.prompt\": \"hi\"}')",
    "INSERT INTO alerts VALUES ('alert_1', 'proj_a', 'Slow', 'latency_ms_5m', 'gt', 2500.0,"
    " 'https://hooks.example.com/x', 3000)",
    "INSERT INTO idempotency VALUES ('kh', 'idem-1', 'rh', 201, '{\"id\": \"proj_a\"}', 4000)",
]
TABLES = ("projects", "api_keys", "traces", "spans", "alerts", "idempotency")


def old_database(path: Path) -> Path:
    """A database as tracetui made it before migrations: today's tables, user_version 0."""
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA)
    for statement in OLD_ROWS:
        db.execute(statement)
    db.commit()
    db.close()
    return path


def old_columns() -> dict[str, str]:
    """Each table's columns in the schema before migrations: later ones may add columns."""
    db = sqlite3.connect(":memory:")
    db.executescript(OLD_SCHEMA)
    return {t: ", ".join(row[1] for row in db.execute(f"PRAGMA table_info({t})")) for t in TABLES}


def contents(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table, by the columns the tables had before migrations."""
    db = sqlite3.connect(path)
    try:
        return {
            t: sorted(db.execute(f"SELECT {cols} FROM {t}").fetchall())
            for t, cols in old_columns().items()
        }
    finally:
        db.close()


def schema_of(path: Path) -> list[tuple[str, str, str]]:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    finally:
        db.close()


def version_of(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return user_version(db)
    finally:
        db.close()


def test_a_database_from_before_migrations_opens_with_every_row_intact(tmp_path: Path) -> None:
    path = old_database(tmp_path / "old.sqlite3")
    before, schema = contents(path), schema_of(path)
    assert version_of(path) == 0 and all(before.values())

    store = Store(path)

    assert version_of(path) == LATEST
    assert contents(path) == before
    # Later migrations leave the other tables as they were. Migration 2 rebuilt spans (a rowid
    # table now) and ordered traces by listed_at, which old traces take from started_at.
    changed = {"spans", "sqlite_autoindex_spans_1", "spans_by_trace_time", "traces"}
    changed |= {"traces_by_project_time", "traces_by_project_listed"}
    # Migration 4 (alerts) only adds: an index of traces, four tables and their indexes.
    changed |= {"traces_by_project_started", "alert_secrets", "alert_states", "alert_events"}
    changed |= {"sqlite_autoindex_alert_secrets_1", "sqlite_autoindex_alert_states_1"}
    changed |= {"sqlite_autoindex_alert_events_1", "alert_events_by_alert", "sqlite_sequence"}
    changed |= {"webhook_deliveries", "sqlite_autoindex_webhook_deliveries_1"}
    changed |= {"webhook_deliveries_due"}
    # Migration 6 (replicas) adds two tables and a webhook's claim columns.
    changed |= {"leases", "sqlite_autoindex_leases_1"}
    changed |= {"rate_counts", "sqlite_autoindex_rate_counts_1"}
    # Migration 7 adds columns to keys (prefix, last use) and alerts (pause, mute).
    changed |= {"api_keys", "alerts"}
    # Migration 8 (search) adds indexes of traces, the text's tables and their trigger.
    changed |= {f"traces_by_project_{i}" for i in ("duration", "cost", "tokens", "user")}
    changed |= {f"traces_by_project_{i}" for i in ("session", "errors", "name")}
    changed |= {"trace_text_keys", "sqlite_autoindex_trace_text_keys_1", "trace_texts_gone"}
    changed |= {f"trace_texts{i}" for i in ("", "_data", "_idx", "_content", "_docsize")}
    changed |= {"trace_texts_config"}
    # Migration 9 (GenAI log events) adds their table, its indexes and its trigger.
    changed |= {"span_logs", "span_logs_by_span", "span_logs_by_received", "span_logs_gone"}
    # Migration 11 adds the table of texts waiting for the index, its index and its trigger.
    changed |= {"trace_text_pending", "sqlite_autoindex_trace_text_pending_1"}
    changed |= {"trace_text_pending_gone"}
    # Migration 13 (annotations) adds their table and its indexes.
    changed |= {"annotations", "sqlite_autoindex_annotations_1"}
    changed |= {f"annotations_by_{i}" for i in ("trace", "label", "name", "session", "time")}
    # Migration 14 (span conditions) adds an index of failed spans.
    changed |= {"spans_failed"}
    # Migration 15 moves the text index to a file of its own (textfile.py): deletions leave
    # tombstones for it, by a trigger.
    changed |= {"trace_text_tombstones", "trace_text_gone"}
    kept = [entry for entry in schema if entry[1] not in changed]
    assert [entry for entry in schema_of(path) if entry[1] not in changed] == kept
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT listed_at FROM traces").fetchall() == [(5000,)]
    # Migration 3: the list's preview, from a stored trace's `input` attribute, on one line.
    assert raw.execute("SELECT input_preview FROM traces").fetchall() == [("Where is my order?",)]
    assert raw.execute(
        "SELECT cost_source, cache_read_tokens, reasoning_tokens FROM spans"
    ).fetchall() == [(None, 0, 0), (None, 0, 0)]
    raw.close()
    # And the new code reads the old rows by name.
    assert store.key_scope("pk-key") is not None
    assert store.key_scope("pk-key").project_id == "proj_b"  # type: ignore[union-attr]
    assert [p.id for p in store.list_projects()] == ["proj_a", "proj_b"]
    trace = store.get_trace("t1")
    assert trace is not None and trace.total_cost_usd == 0.25 and trace.error_count == 1
    spans = store.list_spans("t1")
    assert [(s.id, s.parent_id, s.model, s.error_message) for s in spans] == [
        ("s1", None, None, None),
        ("s2", "s1", "gpt-4o", "boom"),
    ]
    assert [a.threshold for a in store.list_alerts("proj_a")] == [2500.0]
    # An alert from before webhooks were signed gets a secret, and no state until evaluated.
    secret = store.alert_secret("alert_1")
    assert secret is not None and secret.secret.startswith("whsec_")
    assert store.alert_states() == {} and store.due_deliveries(10**15, 10) == []
    assert Store(path).alert_secret("alert_1") == secret  # made once, not at every opening
    remembered = store.recall_response("kh", "idem-1")
    assert remembered is not None and remembered.body == {"id": "proj_a"}


def test_a_new_database_gets_the_same_schema_at_the_latest_version(tmp_path: Path) -> None:
    Store(tmp_path / "new.sqlite3")
    old = old_database(tmp_path / "old.sqlite3")
    Store(old)
    assert version_of(tmp_path / "new.sqlite3") == LATEST
    assert schema_of(tmp_path / "new.sqlite3") == schema_of(old)


def test_a_database_at_the_latest_version_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "latest.sqlite3"
    store = Store(path)
    with store.transaction() as db:
        store.insert_project(db, "kept", None, 30, project_id="proj_kept", created_at=1)
    store.close()
    statements: list[str] = []
    db = sqlite3.connect(path, isolation_level=None)
    db.set_trace_callback(statements.append)
    assert migrate(db, str(path)) == LATEST
    db.close()
    assert statements == ["PRAGMA user_version"]  # read the version, ran nothing
    assert [p.id for p in Store(path).list_projects()] == ["proj_kept"]


def test_a_database_from_a_newer_tracetui_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "newer.sqlite3"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {LATEST + 1}")
    db.close()
    with pytest.raises(SchemaTooNew) as refused:
        Store(path)
    message = str(refused.value)
    assert str(path) in message and f"version {LATEST + 1}" in message
    assert f"up to {LATEST}" in message
    assert version_of(path) == LATEST + 1 and schema_of(path) == []


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["demo"]])
def test_serve_and_demo_refuse_a_newer_database_with_a_message(
    tmp_path: Path, command: list[str]
) -> None:
    path = tmp_path / "newer.sqlite3"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {LATEST + 1}")
    db.close()
    result = run_tracetui(command[0], "--db", str(path), *command[1:])
    assert result.returncode == 2
    assert "newer tracetui" in result.stderr and "Traceback" not in result.stderr


STEPS = (
    Migration(1, "a", "CREATE TABLE a (x INTEGER);\nINSERT INTO a VALUES (1);"),
    Migration(2, "b", "CREATE TABLE b (y TEXT);"),
)


def test_migrations_run_in_order_each_in_one_transaction(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "steps.sqlite3", isolation_level=None)
    broken = Migration(3, "c then a typo", "CREATE TABLE c (z);\nCREATE TABLO d (w);")
    with pytest.raises(sqlite3.OperationalError):
        migrate(db, "steps", (*STEPS, broken))
    # 1 and 2 are in; 3 left nothing behind, not even its first statement or its version.
    assert user_version(db) == 2
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    assert tables == {"a", "b"}
    assert db.execute("SELECT x FROM a").fetchall() == [(1,)]
    fixed = Migration(3, "c", "CREATE TABLE c (z);")
    assert migrate(db, "steps", (*STEPS, fixed)) == 2
    assert user_version(db) == 3
    assert migrate(db, "steps", (*STEPS, fixed)) == 3  # nothing left to do: nothing re-run


def test_a_migration_with_an_unfinished_statement_is_rejected() -> None:
    with pytest.raises(ValueError, match="incomplete"):
        list(split_statements(Migration(9, "typo", "CREATE TABLE x (a);\nCREATE TABLE y (b)")))


# Rows of a database at schema version 4, in two projects: the spans of each trace, a trace
# with two spans, one with a preview, and a span whose trace has no row (never readable).
V4_ROWS = [
    "INSERT INTO projects VALUES ('proj_a', 'A', NULL, 30, 1000)",
    "INSERT INTO projects VALUES ('proj_b', 'B', NULL, 7, 2000)",
    "INSERT INTO traces (id, project_id, name, started_at, duration_ms, span_count, input_tokens,"
    " output_tokens, total_cost_usd, status, error_count, attributes, listed_at, input_preview)"
    " VALUES ('t1', 'proj_a', 'run', 5000, 40, 2, 10, 20, 0.25, 'error', 1, '{}', 5000, 'hi a')",
    "INSERT INTO traces (id, project_id, name, started_at, duration_ms, span_count, input_tokens,"
    " output_tokens, total_cost_usd, status, error_count, attributes, listed_at, input_preview)"
    " VALUES ('t2', 'proj_b', 'other', 6000, 5, 1, 0, 0, 0.0, 'ok', 0, '{\"k\": 1}', 5990, NULL)",
    "INSERT INTO spans (trace_id, id, parent_id, name, kind, model, started_at, duration_ms,"
    " input_tokens, output_tokens, cost_usd, status, error_message, attributes, cost_source,"
    " cache_read_tokens) VALUES ('t1', 's1', NULL, 'run', 'agent', NULL, 5000, 40, 0, 0, 0.0,"
    " 'ok', NULL, '{}', NULL, 0)",
    "INSERT INTO spans (trace_id, id, parent_id, name, kind, model, started_at, duration_ms,"
    " input_tokens, output_tokens, cost_usd, status, error_message, attributes, cost_source,"
    " cache_read_tokens) VALUES ('t1', 's2', 's1', 'call', 'llm', 'gpt-4o', 5001, 30, 10, 20,"
    " 0.25, 'error', 'boom', '{\"input.value\": \"hi a\"}', 'estimated', 3)",
    "INSERT INTO spans (trace_id, id, parent_id, name, kind, model, started_at, duration_ms,"
    " input_tokens, output_tokens, cost_usd, status, error_message, attributes, cost_source,"
    " cache_read_tokens) VALUES ('t2', 's1', NULL, 'other', 'chain', NULL, 6000, 5, 0, 0, 0.0,"
    " 'ok', NULL, '{}', NULL, 0)",
    "INSERT INTO spans (trace_id, id, parent_id, name, kind, model, started_at, duration_ms,"
    " input_tokens, output_tokens, cost_usd, status, error_message, attributes, cost_source,"
    " cache_read_tokens) VALUES ('gone', 's9', NULL, 'orphan', 'chain', NULL, 1, 1, 0, 0, 0.0,"
    " 'ok', NULL, '{}', NULL, 0)",
]


def version_4_database(path: Path) -> Path:
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, str(path), MIGRATIONS[:4])
    assert user_version(db) == 4
    db.execute("BEGIN")
    for statement in V4_ROWS:
        db.execute(statement)
    db.execute("COMMIT")
    db.close()
    return path


def test_trace_ids_become_scoped_by_project_with_every_readable_row_kept(tmp_path: Path) -> None:
    path = version_4_database(tmp_path / "v4.sqlite3")
    raw = sqlite3.connect(path)
    traces_before = raw.execute("SELECT * FROM traces ORDER BY id").fetchall()
    spans_before = raw.execute(
        "SELECT * FROM spans WHERE trace_id != 'gone' ORDER BY trace_id, id"
    ).fetchall()
    raw.close()

    store = Store(path)

    assert version_of(path) == LATEST >= 5
    raw = sqlite3.connect(path)
    # Later migrations add columns at the end of traces (search: version 8).
    traces_after = raw.execute("SELECT * FROM traces ORDER BY id").fetchall()
    assert [row[: len(traces_before[0])] for row in traces_after] == traces_before
    # Each span now carries its trace's project, ahead of the columns it had.
    spans_after = raw.execute("SELECT * FROM spans ORDER BY trace_id, id").fetchall()
    assert [row[1:] for row in spans_after] == spans_before
    assert [row[0] for row in spans_after] == ["proj_a", "proj_a", "proj_b"]
    raw.close()
    trace = store.get_trace("t1", "proj_a")
    assert trace is not None and trace.input_preview == "hi a" and trace.total_cost_usd == 0.25
    assert [s.id for s in store.iter_spans("t1", "proj_a")] == ["s1", "s2"]
    assert store.get_trace("t1", "proj_b") is None and list(store.iter_spans("t1", "proj_b")) == []

    # The same id in the other project is another trace, beside the first.
    span = SpanRow("t1", "s1", None, "b's run", "chain", None, 7000, 9, 0, 0, 0.0, "ok", None, "{}")
    store.ingest([[SpanGroup("proj_b", None, "{}", [span])]])
    assert [(t.project_id, t.name) for t in store.find_traces("t1")] == [
        ("proj_a", "run"),
        ("proj_b", "b's run"),
    ]
    assert [s.name for s in store.iter_spans("t1", "proj_a")] == ["run", "call"]
    assert [s.name for s in store.iter_spans("t1", "proj_b")] == ["b's run"]
    # The key holds both columns: the same (id, project) twice is refused.
    with pytest.raises(sqlite3.IntegrityError), store.transaction() as db:
        db.execute(
            "INSERT INTO traces (id, project_id, name, started_at, duration_ms, span_count,"
            " input_tokens, output_tokens, total_cost_usd, status, error_count, attributes,"
            " listed_at) VALUES ('t1', 'proj_a', 'x', 0, 0, 0, 0, 0, 0.0, 'ok', 0, '{}', 0)"
        )


def test_the_scoping_migration_is_undone_whole_if_it_fails(tmp_path: Path) -> None:
    path = version_4_database(tmp_path / "v4.sqlite3")
    db = sqlite3.connect(path, isolation_level=None)
    schema = schema_of(path)
    # A last statement that fails (spans exists by then): all of the migration is undone.
    broken = Migration(5, MIGRATIONS[4].summary, MIGRATIONS[4].sql + "\nCREATE TABLE spans (x);")
    with pytest.raises(sqlite3.OperationalError):
        migrate(db, str(path), (*MIGRATIONS[:4], broken))
    db.close()
    assert version_of(path) == 4 and schema_of(path) == schema
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT count(*) FROM spans").fetchone() == (4,)
    raw.close()
