"""The SQLite store's schema, version by version, and where it keeps its version: PRAGMA
user_version (the runner, one for both stores, is store/migrations.py).

Databases made before migrations existed have user_version 0 and already hold every table of
migration 1, which is why migration 1 creates only what is missing. The migration lock is
SQLite's write lock, taken up front (BEGIN IMMEDIATE) before the version is read: a second
process opening the same file waits, then sees the migration done and skips it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from tui.server.search.text import MAX_TRACE, folded, needs_folding
from tui.server.store import migrations
from tui.server.store.migrations import Migration
from tui.server.store.sqlite.textfile import move_texts

# The schema of every tracetui before migrations, verbatim: on those databases it is a no-op.
SCHEMA_V1 = """
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

# OTLP ingest. Spans become a rowid table: a WITHOUT ROWID table keeps each ~1 KB row inside
# its primary-key B-tree, keyed by random hex trace ids, so every insert split pages at random
# places (47 us a span here, against 25 us appended to a rowid table; reading a 50,000-span
# trace also got faster, 267 -> 172 ms). (trace_id, id) stays unique: a re-sent span replaces
# itself. Spans gain what ingest keeps beyond the spec: where the cost came from and the cache
# and reasoning token counts. Traces gain listed_at, the start a trace had when it was first
# stored: the list is ordered and paged by it, so a late root that moves started_at earlier
# never moves a trace across a reader's cursor (no duplicate, no gap).
SCHEMA_V2 = """
CREATE TABLE spans_v2 (
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
    cost_source TEXT,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    UNIQUE (trace_id, id)
);
INSERT INTO spans_v2 (trace_id, id, parent_id, name, kind, model, started_at, duration_ms,
    input_tokens, output_tokens, cost_usd, status, error_message, attributes)
SELECT trace_id, id, parent_id, name, kind, model, started_at, duration_ms,
    input_tokens, output_tokens, cost_usd, status, error_message, attributes
FROM spans ORDER BY trace_id, started_at, id;
DROP TABLE spans;
ALTER TABLE spans_v2 RENAME TO spans;
CREATE INDEX spans_by_trace_time ON spans(trace_id, started_at, id);
ALTER TABLE traces ADD COLUMN listed_at INTEGER NOT NULL DEFAULT 0;
UPDATE traces SET listed_at = started_at;
DROP INDEX traces_by_project_time;
CREATE INDEX traces_by_project_listed ON traces(project_id, listed_at, id);
"""

# The list's input preview (see ingest/preview.py): set by ingest, and here for the traces
# already stored from their `input` attribute (the demo's), when it is text.
SCHEMA_V3 = """
ALTER TABLE traces ADD COLUMN input_preview TEXT;
UPDATE traces SET input_preview = substr(
        trim(replace(replace(json_extract(attributes, '$.input'), char(10), ' '), char(13), ' ')),
        1, 200)
    WHERE json_valid(attributes) AND json_type(attributes, '$.input') = 'text';
"""

# Alerts. Evaluation reads windows of traces by started_at: a covering index gives
# it the columns its measures need (duration, errors, cost) without touching the table, so a
# window of a million traces is one walk of one index. An alert's signing secret lives in a
# table of its own (read by the delivery worker only); its state, its history (state changes
# and delivery attempts, paged newest first by seq) and the webhooks still to deliver (which
# survive a restart) in three more.
SCHEMA_V4 = """
CREATE INDEX traces_by_project_started
    ON traces(project_id, started_at, duration_ms, error_count, total_cost_usd);
CREATE TABLE alert_secrets (
    alert_id TEXT PRIMARY KEY REFERENCES alerts(id),
    secret TEXT NOT NULL
);
CREATE TABLE alert_states (
    alert_id TEXT PRIMARY KEY REFERENCES alerts(id),
    state TEXT NOT NULL,
    last_value REAL,
    last_evaluated_at INTEGER,
    firing_since INTEGER
);
CREATE TABLE alert_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    alert_id TEXT NOT NULL REFERENCES alerts(id),
    kind TEXT NOT NULL,
    at INTEGER NOT NULL,
    from_state TEXT,
    to_state TEXT,
    value REAL,
    window_start INTEGER,
    window_end INTEGER,
    event_type TEXT,
    webhook_id TEXT,
    attempt INTEGER,
    status_code INTEGER,
    error TEXT,
    duration_ms INTEGER,
    ok INTEGER
);
CREATE INDEX alert_events_by_alert ON alert_events(alert_id, seq);
CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    alert_id TEXT NOT NULL REFERENCES alerts(id),
    event_type TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at INTEGER,
    status TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at)
    WHERE status = 'pending';
"""

# Trace ids scoped by project: the same id sent to two projects is two traces, each with its
# own spans, sums and preview, and a project can never write into another's trace.
#
# traces: PRIMARY KEY (id, project_id), not (project_id, id). Both find a project's trace
# by its two columns, and the id first also answers "which projects hold this id" (the
# workspace key asks that when it names no project) from the same B-tree: the other order
# needs a second index on id, one more random-keyed insert per trace. Listing and the
# alerts' windows go by their own (project_id, ...) indexes, as before. A rowid table still:
# the alerts' window queries rank rows by rowid on a covering index.
#
# spans: keyed by (project_id, trace_id, id), the columns readers have in hand, rather than by
# an internal trace row id. A span needs no trace row to be stored (ingest writes spans first,
# then computes their trace's row from them), a reader needs no join, and PostgreSQL copies it
# as it is. It costs a project id (~20 bytes) in each ~1 KB row and its two indexes.
#
# Spans whose trace has no row cannot be read nor swept by retention; they are not copied.
SCHEMA_V5 = """
CREATE TABLE traces_v5 (
    id TEXT NOT NULL,
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
    attributes TEXT NOT NULL,
    listed_at INTEGER NOT NULL,
    input_preview TEXT,
    PRIMARY KEY (id, project_id)
);
INSERT INTO traces_v5 (id, project_id, name, started_at, duration_ms, span_count, input_tokens,
    output_tokens, total_cost_usd, status, error_count, attributes, listed_at, input_preview)
SELECT id, project_id, name, started_at, duration_ms, span_count, input_tokens,
    output_tokens, total_cost_usd, status, error_count, attributes, listed_at, input_preview
FROM traces ORDER BY rowid;
CREATE TABLE spans_v5 (
    project_id TEXT NOT NULL,
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
    cost_source TEXT,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    UNIQUE (project_id, trace_id, id)
);
INSERT INTO spans_v5 (project_id, trace_id, id, parent_id, name, kind, model, started_at,
    duration_ms, input_tokens, output_tokens, cost_usd, status, error_message, attributes,
    cost_source, cache_read_tokens, cache_write_tokens, reasoning_tokens)
SELECT t.project_id, s.trace_id, s.id, s.parent_id, s.name, s.kind, s.model, s.started_at,
    s.duration_ms, s.input_tokens, s.output_tokens, s.cost_usd, s.status, s.error_message,
    s.attributes, s.cost_source, s.cache_read_tokens, s.cache_write_tokens, s.reasoning_tokens
FROM spans s JOIN traces t ON t.id = s.trace_id
ORDER BY t.project_id, s.trace_id, s.started_at, s.id;
DROP TABLE spans;
DROP TABLE traces;
ALTER TABLE traces_v5 RENAME TO traces;
ALTER TABLE spans_v5 RENAME TO spans;
CREATE INDEX traces_by_project_listed ON traces(project_id, listed_at, id);
CREATE INDEX traces_by_project_started
    ON traces(project_id, started_at, duration_ms, error_count, total_cost_usd);
CREATE INDEX spans_by_trace_time ON spans(project_id, trace_id, started_at, id);
"""

# Replicas sharing the work (the same tables as the PostgreSQL store's, which needs them; here
# one process holds every lease and claim, through the same code):
# - leases: one row per periodic task (alert rounds, retention...), held by `holder` until
#   `expires_at` (epoch ms), taken or renewed by one conditional upsert;
# - rate_counts: requests per rate-limit bucket and window;
# - a webhook's claim: the replica attempting it (claimed_by) until claimed_until (epoch ms).
SCHEMA_V6 = """
CREATE TABLE leases (
    name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE TABLE rate_counts (
    bucket TEXT NOT NULL,
    window_start INTEGER NOT NULL,
    hits INTEGER NOT NULL,
    PRIMARY KEY (bucket, window_start)
);
ALTER TABLE webhook_deliveries ADD COLUMN claimed_by TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN claimed_until INTEGER;
"""

# Running a project from the app:
# - a key's prefix (its first 10 characters, so a person tells keys apart; older keys get the
#   6 their scope tells) and when it was last used (noted at most once a minute: api_keys.KeyUsage);
# - an alert's pause (not evaluated) and mute (transitions recorded, no webhook before
#   muted_until);
# - the secret a rotation replaced, which still signs deliveries until previous_valid_until.
SCHEMA_V7 = """
ALTER TABLE api_keys ADD COLUMN prefix TEXT NOT NULL DEFAULT '';
UPDATE api_keys SET prefix = CASE WHEN project_id IS NULL THEN 'tt_ws_' ELSE 'tt_pk_' END;
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;
ALTER TABLE alerts ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;
ALTER TABLE alerts ADD COLUMN muted_until INTEGER;
ALTER TABLE alert_secrets ADD COLUMN previous_secret TEXT;
ALTER TABLE alert_secrets ADD COLUMN previous_valid_until INTEGER;
"""

# Finding any trace (search/): who and which conversation a trace is for, its tags, its answer
# on one line, and the models its spans used, read by ingest; the indexes that give the first
# page of each filter and sort of GET /v1/traces without a scan, each by project then the
# filtered or sorted value then the keyset's id; and the text `q` searches, in an FTS5 table
# with the trigram tokenizer (case-insensitive substrings of 3 characters or more).
#
# The text is keyed by trace_text_keys' INTEGER PRIMARY KEY, not by the traces' rowid, which
# VACUUM may renumber (traces has no INTEGER PRIMARY KEY); a trigger removes a deleted trace's
# text, whichever statement deletes it (retention, a project's deletion).
#
# Rows stored before this version keep NULL users, sessions and output previews, no tags and
# no text (reading them back would parse every span); their models are filled in from their
# spans here, so the model filter finds them.
SCHEMA_V8 = """
ALTER TABLE traces ADD COLUMN user_id TEXT;
ALTER TABLE traces ADD COLUMN session_id TEXT;
ALTER TABLE traces ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE traces ADD COLUMN output_preview TEXT;
ALTER TABLE traces ADD COLUMN models TEXT NOT NULL DEFAULT '[]';
UPDATE traces SET models = (
    SELECT json_group_array(DISTINCT lower(s.model)) FROM spans s
    WHERE s.project_id = traces.project_id AND s.trace_id = traces.id
    AND s.model IS NOT NULL AND s.model != '');
CREATE INDEX traces_by_project_duration ON traces(project_id, duration_ms, id);
CREATE INDEX traces_by_project_cost ON traces(project_id, total_cost_usd, id);
CREATE INDEX traces_by_project_tokens ON traces(project_id, (input_tokens + output_tokens), id);
CREATE INDEX traces_by_project_user ON traces(project_id, user_id, listed_at, id)
    WHERE user_id IS NOT NULL;
CREATE INDEX traces_by_project_session ON traces(project_id, session_id, listed_at, id)
    WHERE session_id IS NOT NULL;
CREATE INDEX traces_by_project_errors ON traces(project_id, listed_at, id)
    WHERE status = 'error';
CREATE INDEX traces_by_project_name ON traces(project_id, lower(name), listed_at, id);
CREATE TABLE trace_text_keys (
    id INTEGER PRIMARY KEY,
    project_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    UNIQUE (project_id, trace_id)
);
CREATE VIRTUAL TABLE trace_texts USING fts5(body, tokenize = 'trigram');
CREATE TRIGGER trace_texts_gone AFTER DELETE ON traces BEGIN
    DELETE FROM trace_texts WHERE rowid IN (
        SELECT id FROM trace_text_keys WHERE project_id = old.project_id AND trace_id = old.id);
    DELETE FROM trace_text_keys WHERE project_id = old.project_id AND trace_id = old.id;
END;
"""

# GenAI log events (POST /v1/logs) of a span, kept while its trace is: each is joined into its
# span's attributes as `tracetui.logs` (store/logs.py), whichever of the two comes first. The
# trace's deletion (retention, a project's deletion) takes its logs along. (The joins are the
# writers' own, once per batch: a trigger on inserting traces, even one that never fires,
# slowed ingest by a fifth.)
SCHEMA_V9 = """
CREATE TABLE span_logs (
    id INTEGER PRIMARY KEY,
    project_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    span_id TEXT NOT NULL,
    time_unix_nano INTEGER NOT NULL,
    received_at INTEGER NOT NULL,
    event TEXT NOT NULL
);
CREATE INDEX span_logs_by_span ON span_logs(project_id, trace_id, span_id);
CREATE INDEX span_logs_by_received ON span_logs(received_at);
CREATE TRIGGER span_logs_gone AFTER DELETE ON traces BEGIN
    DELETE FROM span_logs WHERE project_id = old.project_id AND trace_id = old.id;
END;
"""

# How many of a trace's spans have a model without a price (cost_source 'unknown_model'), so
# the list can show its cost as unknown, not $0. Ingest keeps it (ingest/summaries.py,
# store/sql.py upsert_traces). Traces stored before keep 0, as if every span were priced: they are
# not backfilled (a pass over every span of every trace), and a trace that gets another span
# is recomputed from all its spans then.
SCHEMA_V10 = """
ALTER TABLE traces ADD COLUMN unpriced_spans INTEGER NOT NULL DEFAULT 0;
"""

# The text `q` searches, indexed off ingest's path (store/texts.py): ingest writes a new
# trace's text, or a stored trace's grown text, to trace_text_pending, a plain table (a row
# costs ~1 us; the FTS5 row cost the write more than half its time), and the service's
# indexer moves the rows into trace_texts in batches (replacing the row of a trace whose text
# grew after it was indexed). A deleted trace's pending text goes with it.
SCHEMA_V11 = """
CREATE TABLE trace_text_pending (
    id INTEGER PRIMARY KEY,
    project_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (project_id, trace_id)
);
CREATE TRIGGER trace_text_pending_gone AFTER DELETE ON traces BEGIN
    DELETE FROM trace_text_pending WHERE project_id = old.project_id AND trace_id = old.id;
END;
"""


def fold_texts(db: sqlite3.Connection) -> None:
    """Version 12: the texts stored before texts were folded (search.text), folded where that
    changes more than ASCII's case (which FTS5 folds by itself); one pass over the texts, those
    indexed and those still waiting for the index."""
    for table in ("trace_texts", "trace_text_pending"):
        changed = [
            (folded(body)[:MAX_TRACE], rowid)
            for rowid, body in db.execute(f"SELECT rowid, body FROM {table}")
            if body and needs_folding(body)
        ]
        db.executemany(f"UPDATE {table} SET body = ? WHERE rowid = ?", changed)


# Annotations (scores, labels and notes: store/annotations.py) on a trace, a span of it, or a
# session. An annotation of a trace or span keeps its trace's listed_at (which never changes),
# so that the traces an annotation filter keeps are found in the list's order from the
# annotations' own indexes, each by project first:
# - by_trace (trace, name, label, score): a trace's and its spans' annotations (the answers'
#   summaries, a batch's targets, deletion with the trace), and the filters' EXISTS looked up
#   from a trace, answered from the index alone;
# - by_label (name, label, listed_at, trace) and by_name (name, listed_at, trace, score): the
#   traces of a label, or of a name (and a score bound, checked in the index), newest first;
# - by_session and by_time: a session's annotations and a project's, newest first.
# Deleted with their trace (traces.expire, admin.delete_project), not by a trigger: a session's
# go when no trace of the session is left, which a statement says more plainly.
SCHEMA_V13 = """
CREATE TABLE annotations (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    trace_id TEXT,
    span_id TEXT,
    session_id TEXT,
    name TEXT NOT NULL,
    label TEXT,
    score REAL,
    explanation TEXT,
    annotator_kind TEXT NOT NULL,
    identifier TEXT,
    author TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    listed_at INTEGER
);
CREATE INDEX annotations_by_trace ON annotations(project_id, trace_id, name, label, score);
CREATE INDEX annotations_by_label ON annotations(project_id, name, label, listed_at, trace_id);
CREATE INDEX annotations_by_name ON annotations(project_id, name, listed_at, trace_id, score);
CREATE INDEX annotations_by_session ON annotations(project_id, session_id, created_at, id)
    WHERE session_id IS NOT NULL;
CREATE INDEX annotations_by_time ON annotations(project_id, created_at, id);
"""

# A condition on one failed span (GET /v1/traces's span_ filters with span_status=error: "the
# failed gpt-4o calls over 2 s"): the project's failed spans by model and duration, with their
# trace, found without a table read (store/span_search.py). Partial: failures are few, so the
# index costs ingest little; conditions on spans that did not fail walk the traces instead.
SCHEMA_V14 = """
CREATE INDEX spans_failed ON spans(project_id, lower(model), duration_ms, trace_id)
    WHERE status = 'error';
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "projects, keys, traces, spans, alerts, idempotency", SCHEMA_V1),
    Migration(2, "OTLP ingest: spans in a rowid table with extension fields; listed_at", SCHEMA_V2),
    Migration(3, "traces: input_preview for the list", SCHEMA_V3),
    Migration(4, "alerts: window index, secrets, states, events, webhook deliveries", SCHEMA_V4),
    Migration(5, "trace ids scoped by project: traces and spans keyed with the project", SCHEMA_V5),
    Migration(6, "replicas: leases, shared request counts, webhook claims", SCHEMA_V6),
    Migration(7, "keys' prefix and last use; alerts paused, muted; rotated secrets", SCHEMA_V7),
    Migration(8, "search: users, sessions, tags, output previews, models, text", SCHEMA_V8),
    Migration(9, "GenAI log events of spans, joined into their spans", SCHEMA_V9),
    Migration(10, "traces: unpriced_spans, spans whose model has no price", SCHEMA_V10),
    Migration(11, "search: texts waiting for the index, off ingest's path", SCHEMA_V11),
    Migration(12, "search: stored texts case-folded", "", fold_texts),
    Migration(13, "annotations: scores, labels and notes on traces, spans, sessions", SCHEMA_V13),
    Migration(14, "spans: failed ones by model and duration, for span conditions", SCHEMA_V14),
    # The text index in a file of its own, with its own write lock (textfile.py).
    Migration(15, "search: the text index moved to the file <database>-text", "", move_texts),
)
LATEST = MIGRATIONS[-1].version


def user_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def split_statements(migration: Migration) -> Iterator[str]:
    """The statements of `migration` one at a time (executescript would commit on its own)."""
    pending = ""
    for line in migration.sql.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""
    if pending.strip():
        raise ValueError(f"migration {migration.version} ends with an incomplete statement")


class SqliteSchema:
    """A SQLite database's schema version (migrations.Schema), on a connection in autocommit
    mode."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def version(self) -> int:
        return user_version(self.db)

    @contextmanager
    def migrating(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def statements(self, migration: Migration) -> Iterator[str]:
        return split_statements(migration)

    def execute(self, statement: str) -> None:
        self.db.execute(statement)

    def rewrite(self, step: Callable[[Any], None]) -> None:
        step(self.db)

    def record(self, migration: Migration) -> None:
        # A PRAGMA takes no parameters; the version is an int from this module.
        self.db.execute(f"PRAGMA user_version = {int(migration.version)}")


def migrate(db: sqlite3.Connection, path: str, versions: Sequence[Migration] = MIGRATIONS) -> int:
    """Bring the database on `db` (autocommit mode) up to the last of `versions`; returns the
    version it was at. Raises SchemaTooNew, naming `path`, for a database from a newer
    tracetui."""
    return migrations.migrate(SqliteSchema(db), path, versions)
