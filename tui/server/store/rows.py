"""The named rows the service writes and reads, and the small values that travel with them.

Rows are `typing.NamedTuple`s: still tuples, so a 50,000-span trace is read and encoded at tuple
speed and the store binds them straight to `?` placeholders, yet every reader uses names. A row
class's field order is the column list of the store's INSERT and SELECT for it: the class is the
one place that says which position holds which column. Nothing here knows SQL.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, NamedTuple

DAY_MS = 86_400_000
DEFAULT_PROJECT = "default"  # where the workspace key's spans go when no resource names one
DEFAULT_RETENTION_DAYS = 30  # a project's, unless its creator says otherwise


def now_ms() -> int:
    """The current time in epoch milliseconds (how every time is stored)."""
    return time.time_ns() // 1_000_000


class ProjectRow(NamedTuple):
    id: str
    name: str
    description: str | None
    retention_days: int
    created_at: int


class ApiKeyRow(NamedTuple):
    """An API key as stored: its SHA-256 only; project_id None marks the workspace key."""

    key_hash: str
    project_id: str | None
    label: str
    created_at: int
    prefix: str = ""  # the key's first 10 characters, to recognise it by (never the key)
    last_used_at: int | None = None  # noted at most once a minute (api_keys.KeyUsage)


class TraceRow(NamedTuple):
    """A trace as written and as read one at a time (with its attributes, as JSON text). It is
    known by (id, project_id): two projects may each have a trace with the same id."""

    id: str
    project_id: str
    name: str
    started_at: int
    duration_ms: int
    span_count: int
    input_tokens: int
    output_tokens: int
    total_cost_usd: float
    status: str
    error_count: int
    attributes: str
    # The start the trace had when first stored: its place in the list, which never moves (a
    # late root moves started_at only). None when written: the store takes started_at.
    listed_at: int | None = None
    # Beyond the spec: what the user asked, on one line, for the list (ingest/preview.py).
    input_preview: str | None = None
    # Beyond the spec, read by ingest (ingest/associations.py): who and which conversation,
    # the tags (a JSON list, "[]" for none), the final answer on one line, and the models its
    # spans used (a JSON list of lower-cased names, for the model filter).
    user_id: str | None = None
    session_id: str | None = None
    tags: str = "[]"
    output_preview: str | None = None
    models: str = "[]"
    # Beyond the spec: how many of its spans have a model without a price (cost_source
    # "unknown_model"), so the list can say its cost is unknown rather than show $0.
    unpriced_spans: int = 0


class TraceSummary(NamedTuple):
    """A trace as listed: TraceRow without its attributes, which can be large and are not shown."""

    id: str
    project_id: str
    name: str
    started_at: int
    duration_ms: int
    span_count: int
    input_tokens: int
    output_tokens: int
    total_cost_usd: float
    status: str
    error_count: int
    listed_at: int
    input_preview: str | None
    user_id: str | None
    session_id: str | None
    tags: Any  # a JSON list as text (SQLite) or the list itself
    output_preview: str | None
    unpriced_spans: int


class SpanRow(NamedTuple):
    """A span as decoded and written: its table keeps its trace's project ahead of these
    fields (store/sql.py LEADING), as a trace id is its project's."""

    trace_id: str
    id: str
    parent_id: str | None
    name: str
    kind: str
    model: str | None
    started_at: int
    duration_ms: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    status: str
    error_message: str | None
    attributes: str  # a JSON object, as text: answers splice it in without parsing it
    # Beyond the spec (ingest): "reported", "estimated", "unknown_model", or None when there
    # was nothing to cost; cache and reasoning token counts as the emitter reported them.
    cost_source: str | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


class SpanInTrace(NamedTuple):
    """A span as read for its trace: SpanRow without trace_id, which the reader already knows."""

    id: str
    parent_id: str | None
    name: str
    kind: str
    model: str | None
    started_at: int
    duration_ms: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    status: str
    error_message: str | None
    attributes: str
    cost_source: str | None
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int


class IdempotencyRow(NamedTuple):
    """The remembered answer to a create that carried an Idempotency-Key."""

    key_hash: str
    idempotency_key: str
    request_hash: str
    status: int
    body: str  # the answer's JSON text
    created_at: int


class Once(NamedTuple):
    """One use of an Idempotency-Key: whose key sent it, the header's value, the body's hash."""

    key_hash: str
    idempotency_key: str
    request_hash: str


class Reply(NamedTuple):
    """The answer to a change (PATCH, DELETE, rotate-secret) sent with an Idempotency-Key,
    stored in the change's own transaction: a repeat racing the change finds either nothing
    done or this answer, never the change done and no answer."""

    once: Once
    status: int
    body: Any  # JSON; None for no content


class Remembered(NamedTuple):
    """The first answer to an Idempotency-Key, to be replayed (or refused for another body)."""

    request_hash: str
    status: int
    body: Any


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

    listed_at: int
    trace_id: str


class SearchPosition(NamedTuple):
    """A place in a filtered listing's order: the previous page's last sort value and id."""

    value: float | int
    trace_id: str


class GroupPosition(NamedTuple):
    """The last session or user of the previous page: its last_seen and id."""

    last_seen: int
    id: str


# A session or a user as listed: (id, first_seen, last_seen, traces, tokens, cost, errors,
# then a user's sessions or a session's user).
GroupRow = tuple[Any, ...]


class TraceSums(NamedTuple):
    """A trace's row as its batch's spans make it, but for what the writer decides: the
    project and the attributes (the resource's)."""

    id: str
    name: str
    started_at: int
    duration_ms: int
    span_count: int
    input_tokens: int
    output_tokens: int
    total_cost_usd: float
    status: str
    error_count: int
    input_preview: str | None
    preview_from_root: bool  # a root's input wins over a stored preview; another's fills in
    # Read by ingest (ingest/associations.py); a root's user and session win over stored ones,
    # another span's fill in; tags and models add to the stored ones.
    user_id: str | None = None
    session_id: str | None = None
    tags: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    associations_from_root: bool = False
    output_preview: str | None = None
    output_from_root: bool = False  # a root's output wins, as its input does
    search_text: str = ""  # what `q` searches (search/text.py): bounded, one text per trace
    unpriced_spans: int = 0  # spans whose model has no price (cost_source "unknown_model")


class SpanGroup(NamedTuple):
    """Ingested spans of one OTLP resource, bound for one project."""

    project_id: str | None  # a project key's project; None: route by project_name
    project_name: str | None  # named by the resource (workspace key); None: the default project
    resource: str  # the resource's attributes as a JSON object: a new trace's attributes
    spans: list[SpanRow]
    # The sums of the spans' traces (ingest.summaries), worked out as the body was decoded;
    # None: the store works them out.
    traces: list[TraceSums] | None = None


@dataclass(frozen=True)
class SpanLog:
    """One log event of a span, as stored: `event` is the JSON object text of the event."""

    trace_id: str
    span_id: str
    time_unix_nano: int
    event: str


@dataclass(frozen=True)
class LogGroup:
    """The span logs of one resource (POST /v1/logs), before a key decides their project."""

    project_name: str | None
    logs: list[SpanLog]


class KeyInfo(NamedTuple):
    """An API key as `tracetui keys list` shows it: never the key, nor its whole hash."""

    key_id: str  # the first 12 hex digits of the key's SHA-256 (the API shows key_<these>)
    project_id: str | None
    label: str
    created_at: int
    prefix: str = ""
    last_used_at: int | None = None


def new_project(
    name: str,
    description: str | None,
    retention_days: int,
    project_id: str | None = None,
    created_at: int | None = None,
) -> ProjectRow:
    """A project row with a fresh id and the current time unless given."""
    return ProjectRow(
        id=project_id or f"proj_{uuid.uuid4().hex[:12]}",
        name=name,
        description=description,
        retention_days=retention_days,
        created_at=created_at if created_at is not None else now_ms(),
    )
