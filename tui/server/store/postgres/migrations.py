"""The PostgreSQL store's schema, version by version, and where it keeps its version: a table
of its own (the runner, one for both stores, is store/migrations.py).

Each migration runs under a transaction-level advisory lock, so several replicas starting at
once on one database queue on it, and each reads the version again once it holds it.

Version 1 is the SQLite store's schema at its version 5 (trace ids scoped by project), with
PostgreSQL's types: times are epoch milliseconds in BIGINT, costs DOUBLE PRECISION, and the
JSON of attributes TEXT (see SCHEMA_V1). The numbering is this store's own: version 2 is the
SQLite store's 6 (leases, request counts, webhook claims).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg

from tui.server.search.text import MAX_TRACE, folded, needs_folding
from tui.server.store import migrations
from tui.server.store.migrations import Migration

VERSION_TABLE = "tracetui_schema"
# The advisory lock migrations run under: (namespace, what), the two-int form, which never
# meets the single-bigint keys that ingest takes per trace (see `locks`).
MIGRATION_LOCK = (0x7472_6163, 1)


# Why these types:
# - Ids are TEXT COLLATE "C": ordered and compared byte by byte, as SQLite's BINARY does,
#   whatever the database's locale, so the list's order and its cursors (id < ?) agree with
#   the SQLite store's and its B-tree indexes need no locale rules.
# - attributes TEXT, not JSONB: the service returns the stored JSON text as it is (answers
#   splice it in), so TEXT costs nothing on write or read, where JSONB parses every ~1 KB
#   span's JSON on ingest and prints it again on every read, and reorders its keys; JSONB also
#   refuses the escape \u0000, which OTLP attributes may carry. The one query that looks
#   inside (an alert's prompt attributes) casts a few spans' text to json.
# - No FOREIGN KEY constraints: the SQLite store declares them but does not enforce them
#   (foreign_keys is off there), and both stores must accept the same rows; every writer
#   checks the project it writes to.
# - Indexes: those of the SQLite schema. traces_by_project_listed for the list and its
#   cursor; traces_by_project_started covers the alerts' windows (INCLUDE: the measures ride
#   in the leaf pages, an index-only scan) and retention's seek on started_at; spans by their
#   key (project_id, trace_id, id) and by (project_id, trace_id, started_at, id) for a trace's
#   spans in order.
SCHEMA_V1 = """
CREATE TABLE projects (
    id TEXT COLLATE "C" PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT,
    retention_days INTEGER NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE TABLE api_keys (
    key_hash TEXT COLLATE "C" PRIMARY KEY,
    project_id TEXT COLLATE "C",
    label TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE TABLE traces (
    id TEXT COLLATE "C" NOT NULL,
    project_id TEXT COLLATE "C" NOT NULL,
    name TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    duration_ms BIGINT NOT NULL,
    span_count BIGINT NOT NULL,
    input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    total_cost_usd DOUBLE PRECISION NOT NULL,
    status TEXT NOT NULL,
    error_count BIGINT NOT NULL,
    attributes TEXT NOT NULL,
    listed_at BIGINT NOT NULL,
    input_preview TEXT,
    PRIMARY KEY (id, project_id)
);
CREATE INDEX traces_by_project_listed ON traces (project_id, listed_at, id);
CREATE INDEX traces_by_project_started ON traces (project_id, started_at)
    INCLUDE (duration_ms, error_count, total_cost_usd);
CREATE TABLE spans (
    project_id TEXT COLLATE "C" NOT NULL,
    trace_id TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    parent_id TEXT COLLATE "C",
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    model TEXT,
    started_at BIGINT NOT NULL,
    duration_ms BIGINT NOT NULL,
    input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    cost_usd DOUBLE PRECISION NOT NULL,
    status TEXT NOT NULL,
    error_message TEXT,
    attributes TEXT NOT NULL,
    cost_source TEXT,
    cache_read_tokens BIGINT NOT NULL DEFAULT 0,
    cache_write_tokens BIGINT NOT NULL DEFAULT 0,
    reasoning_tokens BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, trace_id, id)
);
CREATE INDEX spans_by_trace_time ON spans (project_id, trace_id, started_at, id);
CREATE TABLE alerts (
    id TEXT COLLATE "C" PRIMARY KEY,
    project_id TEXT COLLATE "C" NOT NULL,
    name TEXT NOT NULL,
    metric TEXT NOT NULL,
    condition TEXT NOT NULL,
    threshold DOUBLE PRECISION NOT NULL,
    webhook_url TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX alerts_by_project ON alerts (project_id, created_at);
CREATE TABLE idempotency (
    key_hash TEXT COLLATE "C" NOT NULL,
    idempotency_key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (key_hash, idempotency_key)
);
CREATE INDEX idempotency_by_age ON idempotency (created_at);
CREATE TABLE alert_secrets (
    alert_id TEXT COLLATE "C" PRIMARY KEY,
    secret TEXT NOT NULL
);
CREATE TABLE alert_states (
    alert_id TEXT COLLATE "C" PRIMARY KEY,
    state TEXT NOT NULL,
    last_value DOUBLE PRECISION,
    last_evaluated_at BIGINT,
    firing_since BIGINT
);
CREATE TABLE alert_events (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT COLLATE "C" NOT NULL UNIQUE,
    alert_id TEXT COLLATE "C" NOT NULL,
    kind TEXT NOT NULL,
    at BIGINT NOT NULL,
    from_state TEXT,
    to_state TEXT,
    value DOUBLE PRECISION,
    window_start BIGINT,
    window_end BIGINT,
    event_type TEXT,
    webhook_id TEXT,
    attempt INTEGER,
    status_code INTEGER,
    error TEXT,
    duration_ms BIGINT,
    ok BOOLEAN
);
CREATE INDEX alert_events_by_alert ON alert_events (alert_id, seq);
CREATE TABLE webhook_deliveries (
    id TEXT COLLATE "C" PRIMARY KEY,
    alert_id TEXT COLLATE "C" NOT NULL,
    event_type TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at BIGINT,
    status TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE status = 'pending'
"""

# Replicas sharing the work: a lease per periodic task (held by `holder` until `expires_at`,
# epoch ms by the database's clock), request counts per rate-limit bucket and window, and a
# webhook's claim by the replica attempting it (claimed_by until claimed_until, epoch ms).
SCHEMA_V2 = """
CREATE TABLE leases (
    name TEXT COLLATE "C" PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE TABLE rate_counts (
    bucket TEXT COLLATE "C" NOT NULL,
    window_start BIGINT NOT NULL,
    hits BIGINT NOT NULL,
    PRIMARY KEY (bucket, window_start)
);
ALTER TABLE webhook_deliveries ADD COLUMN claimed_by TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN claimed_until BIGINT
"""

# The SQLite store's version 7 (see its comment): keys' prefix and last use, alerts' pause
# and mute, the secret a rotation replaced.
SCHEMA_V3 = """
ALTER TABLE api_keys ADD COLUMN prefix TEXT NOT NULL DEFAULT '';
UPDATE api_keys SET prefix = CASE WHEN project_id IS NULL THEN 'tt_ws_' ELSE 'tt_pk_' END;
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;
ALTER TABLE alerts ADD COLUMN paused BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE alerts ADD COLUMN muted_until BIGINT;
ALTER TABLE alert_secrets ADD COLUMN previous_secret TEXT;
ALTER TABLE alert_secrets ADD COLUMN previous_valid_until BIGINT
"""

# The SQLite store's version 8 (see its comment), with the text in a column of its own here
# (TOAST keeps it out of the rows' pages). `q` keeps the same meaning as on SQLite
# (case-insensitive substrings of 3 characters or more): each term is checked with ILIKE, and
# found through a GIN index over the text's trigrams, the distinct 3-character substrings of
# its lower-cased text, made by tracetui_grams (built-in GIN over text[]: no extension, as
# pg_trgm, which does the same, is not in every PostgreSQL: the wheel the tests run lacks it).
# A trace holds every trigram of each term it contains, so the index only narrows; ILIKE
# decides. Tags and models are JSON lists as text, as in SQLite, found by containment on a
# GIN index over their jsonb.
SCHEMA_V4 = """
ALTER TABLE traces ADD COLUMN user_id TEXT COLLATE "C";
ALTER TABLE traces ADD COLUMN session_id TEXT COLLATE "C";
ALTER TABLE traces ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE traces ADD COLUMN output_preview TEXT;
ALTER TABLE traces ADD COLUMN models TEXT NOT NULL DEFAULT '[]';
ALTER TABLE traces ADD COLUMN search_text TEXT;
UPDATE traces t SET models = m.models FROM (
    SELECT project_id, trace_id, json_agg(DISTINCT lower(model))::text AS models FROM spans
    WHERE model IS NOT NULL AND model <> '' GROUP BY project_id, trace_id) m
    WHERE t.project_id = m.project_id AND t.id = m.trace_id;
CREATE INDEX traces_by_project_duration ON traces (project_id, duration_ms, id);
CREATE INDEX traces_by_project_cost ON traces (project_id, total_cost_usd, id);
CREATE INDEX traces_by_project_tokens ON traces (project_id, (input_tokens + output_tokens), id);
CREATE INDEX traces_by_project_user ON traces (project_id, user_id, listed_at, id)
    WHERE user_id IS NOT NULL;
CREATE INDEX traces_by_project_session ON traces (project_id, session_id, listed_at, id)
    WHERE session_id IS NOT NULL;
CREATE INDEX traces_by_project_errors ON traces (project_id, listed_at, id)
    WHERE status = 'error';
CREATE INDEX traces_by_project_name ON traces (project_id, lower(name), listed_at, id);
CREATE INDEX traces_by_tags ON traces USING gin ((tags::jsonb) jsonb_path_ops);
CREATE INDEX traces_by_models ON traces USING gin ((models::jsonb) jsonb_path_ops);
CREATE FUNCTION tracetui_grams(body text) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT coalesce(array_agg(DISTINCT substr(lower(body), i, 3)), '{}') FROM generate_series(1, length(body) - 2) AS i $$;
CREATE INDEX traces_by_text ON traces USING gin (tracetui_grams(search_text))
"""

# The SQLite store's version 9 (see its comment): span logs, joined into their spans by their
# writers (store/logs.py), and deleted with their trace by a trigger.
SCHEMA_V5 = """
CREATE TABLE span_logs (
    id BIGSERIAL PRIMARY KEY,
    project_id TEXT COLLATE "C" NOT NULL,
    trace_id TEXT COLLATE "C" NOT NULL,
    span_id TEXT COLLATE "C" NOT NULL,
    time_unix_nano BIGINT NOT NULL,
    received_at BIGINT NOT NULL,
    event TEXT NOT NULL
);
CREATE INDEX span_logs_by_span ON span_logs (project_id, trace_id, span_id);
CREATE INDEX span_logs_by_received ON span_logs (received_at);
CREATE FUNCTION span_logs_gone() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM span_logs WHERE project_id = OLD.project_id AND trace_id = OLD.id; RETURN NULL; END $$;
CREATE TRIGGER span_logs_gone AFTER DELETE ON traces
    FOR EACH ROW EXECUTE FUNCTION span_logs_gone()
"""

# tracetui_grams again, with the same trigrams, made in linear time. Version 4's took
# substr(text, i, 3) for every i, and in a multibyte encoding each substr walks the text from
# its start: quadratic, 16 ms for a trace's 2,700 characters, which made ingest 75x slower
# than without the index. Here each of the three alignments is cut into 3-character pieces by
# one regexp_replace (C speed), split on chr(1) (mapped to chr(2) in the text first, on both
# sides of a search, so no text splits where it should not); GIN drops duplicate keys itself,
# so no DISTINCT. 0.3 ms for the same trace (docs/postgres-notes.md). The index is rebuilt: the
# keys of a text holding chr(1) change, and where lower() lengthens a text (İ becomes i̇ under
# PG_UNICODE_FAST or ICU) version 4 missed its last trigrams (it counted the positions of the
# text, not of its lower-cased form).
SCHEMA_V6 = r"""
CREATE OR REPLACE FUNCTION tracetui_grams(body text) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT coalesce(array_remove(string_to_array(regexp_replace(substr(b, 1, length(b) / 3 * 3), '(...)', '\1' || chr(1), 'g') || regexp_replace(substr(b, 2, (length(b) - 1) / 3 * 3), '(...)', '\1' || chr(1), 'g') || regexp_replace(substr(b, 3, (length(b) - 2) / 3 * 3), '(...)', '\1' || chr(1), 'g'), chr(1)), ''), '{}') FROM (SELECT replace(lower(body), chr(1), chr(2)) AS b) AS t $$;
REINDEX INDEX traces_by_text
"""

# The SQLite store's version 10 (see its comment): a trace's spans whose model has no price.
# Traces stored before keep 0 (not backfilled) until another of their spans comes.
SCHEMA_V7 = """
ALTER TABLE traces ADD COLUMN unpriced_spans BIGINT NOT NULL DEFAULT 0
"""

# The text index by pg_trgm where the server has it (managed PostgreSQL does; the wheel the
# tests run does not): its GIN keys, made in C from the text's words, cost ingest a third of
# tracetui_grams' (docs/benchmarks.md), and it serves ILIKE itself, the check `q` makes
# anyway, so the answers are the same. Where the extension cannot be made (not installed, no
# privilege) nothing changes: tracetui_grams' index stays. The store reads which index the
# database has as it opens (TRIGRAM_INDEX), so replicas agree. One line: the runner splits
# statements at a ";" that ends a line.
SCHEMA_V8 = """
DO $$ BEGIN CREATE EXTENSION IF NOT EXISTS pg_trgm; CREATE INDEX traces_by_text_trgm ON traces USING gin (search_text gin_trgm_ops); DROP INDEX traces_by_text; EXCEPTION WHEN feature_not_supported OR undefined_file OR undefined_object OR insufficient_privilege THEN NULL; END $$
"""
# Whether the database's text index is pg_trgm's (version 8), in the store's schema.
TRIGRAM_INDEX = (
    "SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = current_schema()"
    " AND indexname = 'traces_by_text_trgm')"
)

# Version 9: texts stored before texts were folded (search.text) folded where that changes more
# than ASCII's case (lower() folds that in every search). The rows with a character past ASCII
# are found by a scan of the table; the others are left as they are.
NON_ASCII_TEXTS = (
    r"SELECT project_id, id, search_text FROM traces WHERE search_text ~ '[^\x01-\x7f]'"
)


def fold_texts(connection: psycopg.Connection[Any]) -> None:
    """Version 9 (see NON_ASCII_TEXTS)."""
    changed = [
        (folded(text)[:MAX_TRACE], project_id, trace_id)
        for project_id, trace_id, text in connection.execute(NON_ASCII_TEXTS)
        if needs_folding(text)
    ]
    with connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE traces SET search_text = %s WHERE project_id = %s AND id = %s", changed
        )


# The SQLite store's version 13 (see its comment): annotations and their indexes.
SCHEMA_V10 = """
CREATE TABLE annotations (
    id TEXT COLLATE "C" PRIMARY KEY,
    project_id TEXT COLLATE "C" NOT NULL,
    trace_id TEXT COLLATE "C",
    span_id TEXT COLLATE "C",
    session_id TEXT COLLATE "C",
    name TEXT COLLATE "C" NOT NULL,
    label TEXT COLLATE "C",
    score DOUBLE PRECISION,
    explanation TEXT,
    annotator_kind TEXT NOT NULL,
    identifier TEXT COLLATE "C",
    author TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    listed_at BIGINT
);
CREATE INDEX annotations_by_trace ON annotations (project_id, trace_id, name, label, score);
CREATE INDEX annotations_by_label ON annotations (project_id, name, label, listed_at, trace_id);
CREATE INDEX annotations_by_name ON annotations (project_id, name, listed_at, trace_id, score);
CREATE INDEX annotations_by_session ON annotations (project_id, session_id, created_at, id)
    WHERE session_id IS NOT NULL;
CREATE INDEX annotations_by_time ON annotations (project_id, created_at, id)
"""

# The SQLite store's version 14 (see its comment): the failed spans by model and duration.
SCHEMA_V11 = """
CREATE INDEX spans_failed ON spans (project_id, lower(model), duration_ms, trace_id)
    WHERE status = 'error'
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "projects, keys, traces and spans by project, alerts, idempotency", SCHEMA_V1),
    Migration(2, "replicas: leases, shared request counts, webhook claims", SCHEMA_V2),
    Migration(3, "keys' prefix and last use; alerts paused, muted; rotated secrets", SCHEMA_V3),
    Migration(4, "search: users, sessions, tags, output previews, models, text", SCHEMA_V4),
    Migration(5, "GenAI log events of spans, joined into their spans", SCHEMA_V5),
    Migration(6, "search: trigrams made in linear time", SCHEMA_V6),
    Migration(7, "traces: unpriced_spans, spans whose model has no price", SCHEMA_V7),
    Migration(8, "search: the text index by pg_trgm where the server has it", SCHEMA_V8),
    Migration(9, "search: stored texts case-folded", "", fold_texts),
    Migration(10, "annotations: scores, labels and notes on traces, spans, sessions", SCHEMA_V10),
    Migration(11, "spans: failed ones by model and duration, for span conditions", SCHEMA_V11),
)
LATEST = MIGRATIONS[-1].version


def schema_version(connection: psycopg.Connection[Any]) -> int:
    """The database's version: 0 when it has no version table (a new database)."""
    row = connection.execute("SELECT to_regclass(%s) IS NOT NULL", (VERSION_TABLE,)).fetchone()
    if row is None or not row[0]:
        return 0
    found = connection.execute(f"SELECT coalesce(max(version), 0) FROM {VERSION_TABLE}")
    version = found.fetchone()
    return int(version[0]) if version is not None else 0


class PostgresSchema:
    """A PostgreSQL database's schema version (migrations.Schema), on a connection in
    autocommit mode."""

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.connection = connection

    def version(self) -> int:
        return schema_version(self.connection)

    @contextmanager
    def migrating(self) -> Iterator[None]:
        with self.connection.transaction():
            self.connection.execute("SELECT pg_advisory_xact_lock(%s, %s)", MIGRATION_LOCK)
            self.connection.execute(
                f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version INTEGER PRIMARY KEY, "
                "summary TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            yield

    def statements(self, migration: Migration) -> list[str]:
        """Statements separated by ";" at line ends (each is sent with the extended protocol,
        which takes one statement)."""
        found = [part.strip() for part in migration.sql.split(";\n")]
        return [statement.rstrip(";") for statement in found if statement]

    def execute(self, statement: str) -> None:
        self.connection.execute(statement.encode())

    def rewrite(self, step: Callable[[Any], None]) -> None:
        step(self.connection)

    def record(self, migration: Migration) -> None:
        self.connection.execute(
            f"INSERT INTO {VERSION_TABLE} (version, summary) VALUES (%s, %s)",
            (migration.version, migration.summary),
        )


def has_trigram_index(connection: psycopg.Connection[Any]) -> bool:
    """Whether the text index is pg_trgm's (SCHEMA_V8), not tracetui_grams'."""
    row = connection.execute(TRIGRAM_INDEX).fetchone()
    return bool(row and row[0])


def migrate(
    connection: psycopg.Connection[Any],
    location: str,
    versions: Sequence[Migration] = MIGRATIONS,
) -> int:
    """Bring the database on `connection` (in autocommit mode) up to the last of `versions`;
    returns the version it was at. Raises SchemaTooNew, naming `location` (a URL without its
    password), for a database from a newer tracetui."""
    return migrations.migrate(PostgresSchema(connection), location, versions)
