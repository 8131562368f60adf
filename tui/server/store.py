"""SQLite storage for the local service: schema, keyset-paged trace listing, hashed API keys.

Times are stored as integer milliseconds since the epoch (UTC). Listing a project's traces walks
the (project_id, started_at, id) index from the cursor's position, so page N costs what page 1
costs: there is no OFFSET anywhere.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
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

TRACE_COLUMNS = (
    "id",
    "project_id",
    "name",
    "started_at",
    "duration_ms",
    "span_count",
    "input_tokens",
    "output_tokens",
    "total_cost_usd",
    "status",
    "error_count",
    "attributes",
)
SPAN_COLUMNS = (
    "trace_id",
    "id",
    "parent_id",
    "name",
    "kind",
    "model",
    "started_at",
    "duration_ms",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "status",
    "error_message",
    "attributes",
)
PROJECT_COLUMNS = ("id", "name", "description", "retention_days", "created_at")
ALERT_COLUMNS = (
    "id",
    "project_id",
    "name",
    "metric",
    "condition",
    "threshold",
    "webhook_url",
    "created_at",
)


def now_ms() -> int:
    """The current time in epoch milliseconds."""
    return time.time_ns() // 1_000_000


def hash_key(api_key: str) -> str:
    """The stored form of an API key."""
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest()


def new_api_key(kind: str) -> str:
    """A fresh random key; the prefix tells a workspace key (`ws`) from a project key (`pk`)."""
    return f"tt_{kind}_{secrets.token_urlsafe(24)}"


@dataclass(frozen=True)
class KeyScope:
    """What a key may reach: every project (the workspace key) or one project."""

    key_hash: str
    project_id: str | None

    @property
    def is_workspace(self) -> bool:
        return self.project_id is None

    def can_read(self, project_id: str) -> bool:
        return self.is_workspace or self.project_id == project_id


@dataclass(frozen=True)
class TracePosition:
    """A place in a project's newest-first trace order: the last row of the previous page."""

    started_at: int
    trace_id: str


class Store:
    """One SQLite database; each thread gets its own connection (WAL lets readers run together)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._local = threading.local()
        self._connection().executescript(SCHEMA)  # executescript manages its own transaction

    # -- connections -------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA busy_timeout=5000")
            self._local.db = db
        return db

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction taken up front, so check-then-insert sequences are atomic."""
        db = self._connection()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    # -- keys ----------------------------------------------------------------------------------

    def add_key(self, api_key: str, project_id: str | None, label: str) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO api_keys VALUES (?, ?, ?, ?)",
                (hash_key(api_key), project_id, label, now_ms()),
            )

    def has_workspace_key(self) -> bool:
        row = (
            self._connection()
            .execute("SELECT 1 FROM api_keys WHERE project_id IS NULL LIMIT 1")
            .fetchone()
        )
        return row is not None

    def key_scope(self, api_key: str) -> KeyScope | None:
        key_hash = hash_key(api_key)
        row = (
            self._connection()
            .execute("SELECT project_id FROM api_keys WHERE key_hash = ?", (key_hash,))
            .fetchone()
        )
        return None if row is None else KeyScope(key_hash, row["project_id"])

    # -- projects ------------------------------------------------------------------------------

    def list_projects(self, only: str | None = None) -> list[dict[str, Any]]:
        sql = f"SELECT {', '.join(PROJECT_COLUMNS)} FROM projects"
        args: tuple[Any, ...] = ()
        if only is not None:
            sql += " WHERE id = ?"
            args = (only,)
        rows = self._connection().execute(sql + " ORDER BY created_at, id", args).fetchall()
        return [dict(row) for row in rows]

    def get_project(self, project_id: str) -> dict[str, Any] | None:
        projects = self.list_projects(only=project_id)
        return projects[0] if projects else None

    def insert_project(
        self,
        db: sqlite3.Connection,
        name: str,
        description: str | None,
        retention_days: int,
        project_id: str | None = None,
        created_at: int | None = None,
    ) -> dict[str, Any]:
        row = {
            "id": project_id or f"proj_{uuid.uuid4().hex[:12]}",
            "name": name,
            "description": description,
            "retention_days": retention_days,
            "created_at": created_at if created_at is not None else now_ms(),
        }
        db.execute("INSERT INTO projects VALUES (?, ?, ?, ?, ?)", tuple(row.values()))
        return row

    # -- traces and spans ----------------------------------------------------------------------

    def list_traces(
        self,
        project_id: str,
        start: int,
        end: int,
        limit: int,
        after: TracePosition | None = None,
    ) -> tuple[list[dict[str, Any]], bool]:
        """One page, newest first, of traces with start <= started_at < end, past `after`.

        Returns the rows and whether more follow. Reads one row beyond `limit` to know that.
        """
        columns = ", ".join(c for c in TRACE_COLUMNS if c != "attributes")
        # One upper bound, the tighter of `end` and the cursor: given two, SQLite seeks with one
        # and filters by the other, and a late page would scan every row before it.
        upper = end - 1 if after is None else min(end - 1, after.started_at)
        sql = (
            f"SELECT {columns} FROM traces WHERE project_id = ? AND started_at >= ? "
            "AND started_at <= ?"
        )
        args: list[Any] = [project_id, start, upper]
        if after is not None:
            # Rows that share the cursor's start time are ordered by id.
            sql += " AND (started_at < ? OR id < ?)"
            args += [after.started_at, after.trace_id]
        sql += " ORDER BY started_at DESC, id DESC LIMIT ?"
        args.append(limit + 1)
        rows = [dict(row) for row in self._connection().execute(sql, args)]
        return rows[:limit], len(rows) > limit

    def get_trace(self, trace_id: str) -> dict[str, Any] | None:
        row = (
            self._connection()
            .execute(f"SELECT {', '.join(TRACE_COLUMNS)} FROM traces WHERE id = ?", (trace_id,))
            .fetchone()
        )
        return None if row is None else dict(row)

    def list_spans(self, trace_id: str) -> list[tuple[Any, ...]]:
        """Every span of a trace ordered by start time, as plain tuples (big traces are big)."""
        cursor = self._connection().cursor()
        cursor.row_factory = None  # tuples: sqlite3.Row costs a third of the time here
        return cursor.execute(
            f"SELECT {', '.join(SPAN_COLUMNS[1:])} FROM spans WHERE trace_id = ? "
            "ORDER BY started_at, id",
            (trace_id,),
        ).fetchall()

    def insert_traces(
        self,
        db: sqlite3.Connection,
        traces: Iterable[Sequence[Any]],
        spans: Iterable[Sequence[Any]] = (),
    ) -> None:
        """Bulk insert rows laid out as TRACE_COLUMNS and SPAN_COLUMNS."""
        db.executemany(f"INSERT INTO traces VALUES ({', '.join('?' * len(TRACE_COLUMNS))})", traces)
        db.executemany(f"INSERT INTO spans VALUES ({', '.join('?' * len(SPAN_COLUMNS))})", spans)

    # -- alerts --------------------------------------------------------------------------------

    def list_alerts(self, project_id: str) -> list[dict[str, Any]]:
        rows = self._connection().execute(
            f"SELECT {', '.join(ALERT_COLUMNS)} FROM alerts WHERE project_id = ? "
            "ORDER BY created_at, id",
            (project_id,),
        )
        return [dict(row) for row in rows]

    def insert_alert(self, db: sqlite3.Connection, **fields: Any) -> dict[str, Any]:
        row = {
            "id": fields.get("id") or f"alert_{uuid.uuid4().hex[:12]}",
            "project_id": fields["project_id"],
            "name": fields["name"],
            "metric": fields["metric"],
            "condition": fields["condition"],
            "threshold": fields["threshold"],
            "webhook_url": fields["webhook_url"],
            "created_at": fields.get("created_at") or now_ms(),
        }
        db.execute(
            f"INSERT INTO alerts VALUES ({', '.join('?' * len(ALERT_COLUMNS))})",
            tuple(row[c] for c in ALERT_COLUMNS),
        )
        return row

    # -- idempotency ---------------------------------------------------------------------------

    def remembered_response(
        self, db: sqlite3.Connection, key_hash: str, idempotency_key: str
    ) -> tuple[str, int, Any] | None:
        """(request hash, status, body) stored for this key's Idempotency-Key, if any."""
        row = db.execute(
            "SELECT request_hash, status, body FROM idempotency "
            "WHERE key_hash = ? AND idempotency_key = ?",
            (key_hash, idempotency_key),
        ).fetchone()
        if row is None:
            return None
        return row["request_hash"], row["status"], json.loads(row["body"])

    def remember_response(
        self,
        db: sqlite3.Connection,
        key_hash: str,
        idempotency_key: str,
        request_hash: str,
        status: int,
        body: Any,
    ) -> None:
        db.execute(
            "INSERT INTO idempotency VALUES (?, ?, ?, ?, ?, ?)",
            (key_hash, idempotency_key, request_hash, status, json.dumps(body), now_ms()),
        )

    def count(self, table: str) -> int:
        """Rows in one of the service's tables (for tests and the demo banner)."""
        if table not in {"projects", "traces", "spans", "alerts", "api_keys"}:
            raise ValueError(f"unknown table {table!r}")
        return int(self._connection().execute(f"SELECT count(*) FROM {table}").fetchone()[0])
