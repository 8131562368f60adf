"""The store's one protocol: what the routes, their dependencies, ingest, alert evaluation and
delivery, the background tasks, `tracetui serve` and `tracetui keys` need of a store.

Everything outside tui/server/store sees a store through TraceStore, never through a backend's
class: SQLite (sqlite.store.Store) and PostgreSQL (postgres.store.PostgresStore) both implement
it whole, and no caller casts a store to reach more. It speaks in the named rows of `rows`;
SQL stays inside the store. Bulk writes for the demo data and the tests (`transaction`,
`insert_traces`...) are not part of it: they are each store's own, with one signature.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from tui.server.search.filters import TraceFilters
from tui.server.store.alert_rows import (
    AlertEventRow,
    AlertRow,
    AlertSecretRow,
    AlertState,
    DeliveryRow,
    WindowStats,
)
from tui.server.store.annotation_protocol import AnnotationStore
from tui.server.store.health import HealthStore
from tui.server.store.rows import (
    ApiKeyRow,
    GroupPosition,
    GroupRow,
    KeyInfo,
    KeyScope,
    LogGroup,
    Once,
    ProjectRow,
    Remembered,
    Reply,
    SearchPosition,
    SpanGroup,
    SpanInTrace,
    TracePosition,
    TraceRow,
    TraceSummary,
)
from tui.server.store.texts import INDEX_BATCH


class AlertStore(Protocol):
    """What alert evaluation, webhook delivery and the alert routes need. Every method may
    block: call from a thread."""

    def get_alert(self, alert_id: str) -> AlertRow | None: ...

    def all_alerts(self) -> list[AlertRow]:
        """Every alert of every project."""
        ...

    def alert_secret(self, alert_id: str) -> AlertSecretRow | None: ...

    def alert_states(self, project_id: str | None = None) -> dict[str, AlertState]:
        """Stored states by alert id, of one project's alerts or all; none for an alert never
        evaluated."""
        ...

    def record_round(
        self,
        states: Sequence[AlertState],
        expected: dict[str, str],
        events: Sequence[AlertEventRow],
        deliveries: Sequence[DeliveryRow],
    ) -> list[str]:
        """Store an evaluation round in one transaction, leaving alone (and returning the ids
        of) alerts whose stored state is no longer `expected`."""
        ...

    def list_alert_events(
        self, alert_id: str, limit: int, before: int | None = None
    ) -> tuple[list[tuple[int, AlertEventRow]], bool]:
        """A page of an alert's events newest first, with their positions; and whether more
        follow. Positions only go down: pass the last one as `before` for the next page."""
        ...

    def window_stats(
        self,
        project_id: str,
        start: int,
        end: int,
        errors: bool = True,
        cost: bool = True,
        p95: bool = False,
    ) -> WindowStats:
        """Count, errored count, cost and (if asked) p95 duration of the traces with
        start <= started_at < end, from one consistent read, by an index."""
        ...

    def worst_traces(
        self, project_id: str, start: int, end: int, measure: str, limit: int = 5
    ) -> list[tuple[str, float]]: ...

    def sample_traces(
        self, project_id: str, strata: Sequence[tuple[int, int]]
    ) -> list[tuple[str, int]]:
        """The first trace (id, span_count) started in each [start, end) of `strata`."""
        ...

    def prompt_attributes(
        self, trace_id: str, spans: int = 3, project_id: str | None = None
    ) -> list[tuple[str, Any]]:
        """The prompt-bearing attributes of a trace's first LLM spans: of the trace of
        `project_id`, or (None) of the one project that holds this id (none if several do)."""
        ...

    def prompt_attributes_of(
        self, project_id: str, trace_ids: Sequence[str], spans: int = 3
    ) -> dict[str, list[tuple[str, Any]]]:
        """prompt_attributes of each of `project_id`'s traces in `trace_ids` (an alert round's
        sample: one read where a store pays a round trip per query)."""
        ...

    def forget_alert_history(self, events_before: int, deliveries_before: int) -> int:
        """Drop old alert events and finished webhooks; returns how many rows went."""
        ...

    def due_deliveries(self, now: int, limit: int, holder: str | None = None) -> list[DeliveryRow]:
        """Pending webhooks due at `now`, the longest waiting first; with `holder`, not those
        another holder's claim (claim_deliveries) still covers."""
        ...

    def claim_deliveries(
        self, delivery_ids: Sequence[str], holder: str, now: int, until: int
    ) -> list[DeliveryRow]:
        """Claim for `holder` until `until` (epoch ms) those of `delivery_ids` that are still
        pending, due at `now` and unclaimed (or whose claim has expired, or is `holder`'s), in
        one statement; returns the rows claimed, as they are now. Two replicas never both
        claim one delivery, so never attempt it in parallel (PostgreSQL: FOR UPDATE SKIP
        LOCKED)."""
        ...

    def release_claims(self, holder: str) -> int:
        """Drop `holder`'s claims on pending webhooks (a replica stopping); how many went."""
        ...

    def next_delivery_at(self) -> int | None: ...

    def get_delivery(self, delivery_id: str) -> DeliveryRow | None: ...

    def record_attempt(
        self, delivery_id: str, attempt: AlertEventRow, next_attempt_at: int | None, status: str
    ) -> None:
        """One attempt made: its event, and the delivery's new state with its claim dropped
        (a retry may be taken by any replica)."""
        ...


class ReplicaStore(Protocol):
    """What several services sharing one store (replicas on one PostgreSQL database) need to
    share the work: leases, so that one replica at a time runs a periodic task, and request
    counts, so that a key's rate limit holds across replicas."""

    def is_shared(self) -> bool:
        """Whether other services may use this store at the same time (PostgreSQL), so request
        counts must be kept in it; False for a store only this process serves (SQLite)."""
        ...

    def take_lease(self, name: str, holder: str, ttl_ms: int) -> bool:
        """Take or renew the lease `name` for `holder`, for `ttl_ms` from now (the store's
        clock), in one conditional upsert: True if `holder` holds it now, False if another
        holder's lease has not expired."""
        ...

    def release_lease(self, name: str, holder: str) -> None:
        """Give up `holder`'s lease `name` (no-op if another holds it)."""
        ...

    def count_requests(self, bucket: str, window_start: int, hits: int = 1) -> int:
        """Add `hits` requests to `bucket`'s window starting at `window_start` (epoch ms);
        returns the window's total across every replica."""
        ...

    def forget_request_counts(self, before: int | None = None) -> int:
        """Drop the request counts of windows that started before `before` (every window if
        None); returns how many went."""
        ...


class KeyStore(Protocol):
    """API keys (api_keys.py says how they are made and named): what a request's key may reach,
    and keys made, listed and revoked by `tracetui keys` and the /v1/keys routes."""

    def key_scope(self, api_key: str) -> KeyScope | None:
        """What `api_key` may reach, or None for an unknown key."""
        ...

    def key_scope_counted(
        self, api_key: str, bucket: str, window_start: int
    ) -> tuple[KeyScope, int] | None:
        """The key's scope and its request counted, at once: None if the key is not known
        (nothing is counted), else its scope and the total of `bucket`'s window starting at
        `window_start` (epoch ms) across replicas, this request included (the shared rate
        limiter's look-up and count: one round trip where the store is shared)."""
        ...

    def has_workspace_key(self) -> bool: ...

    def add_key(self, api_key: str, project_id: str | None, label: str) -> KeyInfo:
        """Store `api_key` (its hash) for `project_id` (None: the workspace)."""
        ...

    def list_keys(self) -> list[KeyInfo]:
        """Every key, oldest first (never a key, nor its whole hash)."""
        ...

    def find_keys(self, ref: str) -> list[KeyInfo]:
        """The keys `ref` names: a key id (or a prefix of one, 6 hex digits at least), else a
        label. More than one means `ref` is ambiguous."""
        ...

    def revoke_key(self, key_id: str) -> bool:
        """Delete the key whose id is `key_id` (whole), whoever's it is; True if there was one."""
        ...

    def remove_key(self, key_id: str, project_id: str | None, reply: Reply | None = None) -> str:
        """Revoke `project_id`'s key (None: a workspace key) whose id is `key_id`: REVOKED,
        NO_SUCH_KEY or LAST_WORKSPACE_KEY (refused), see api_keys; `reply` as AdminStore's
        changes take it."""
        ...

    def note_key_used(self, key_hash: str, now: int | None = None) -> None:
        """Note that the key was used at `now`, unless a use under a minute ago is noted."""
        ...


class SearchStore(Protocol):
    """Finding traces beyond the spec's listing: filters and sorts of GET /v1/traces, and a
    project's sessions and users (store/search.py)."""

    def search_traces(
        self,
        project_id: str,
        filters: TraceFilters,
        start: int,
        end: int,
        limit: int,
        after: SearchPosition | None = None,
        kept_since: int | None = None,
    ) -> tuple[list[TraceSummary], bool]:
        """One page of a project's traces with start <= listed_at < end under `filters`, in
        their order, past `after` (and within `kept_since`, as list_traces); and whether more
        follow."""
        ...

    def list_groups(
        self,
        column: str,
        project_id: str,
        start: int,
        end: int,
        limit: int,
        after: GroupPosition | None = None,
        kept_since: int | None = None,
        user_id: str | None = None,
    ) -> tuple[list[GroupRow], bool]:
        """One page of a project's sessions (`column` "session_id") or users ("user_id") whose
        last trace was listed in [start, end), newest first: (id, first_seen, last_seen, traces,
        tokens, cost, errors[, sessions][, user]); and whether more follow."""
        ...

    def index_texts(self, limit: int = INDEX_BATCH) -> int:
        """Move up to `limit` texts that ingest left waiting for the text index into it, in
        one transaction; returns how many (0: none was waiting). Replicas sharing a database
        may run it at once: each text is indexed by one of them (store/texts.py)."""
        ...


class AdminStore(Protocol):
    """What running a project through the API needs (admin.AdminTables, keys.KeyTables):
    project changes and deletion, alert changes, deletion and secrets, and the answers of
    non-creating writes per Idempotency-Key.

    Each change takes `reply`, the answer to remember for the request's Idempotency-Key (None
    without one): it is stored in the change's own transaction, once the key's lock is held
    and no answer found; if one is (a repeat, maybe racing the first), nothing is changed and
    AlreadyAnswered carries it. A change that finds nothing to change remembers nothing."""

    def update_project(self, row: ProjectRow, reply: Reply | None = None) -> None: ...

    def count_traces_ending_before(self, project_id: str, cutoff: int) -> int: ...

    def delete_project(self, project_id: str, reply: Reply | None = None) -> bool:
        """The project and everything of it, in one transaction."""
        ...

    def update_alert(self, row: AlertRow, reply: Reply | None = None) -> None: ...

    def delete_alert(self, alert_id: str, reply: Reply | None = None) -> bool: ...

    def rotate_secret(
        self, alert_id: str, secret: str, previous_valid_until: int, reply: Reply | None = None
    ) -> bool: ...

    def recall_response(self, key_hash: str, idempotency_key: str) -> Remembered | None: ...

    def keep_response(
        self, key_hash: str, idempotency_key: str, request_hash: str, status: int, body: object
    ) -> None: ...


class TraceStore(
    AlertStore,
    ReplicaStore,
    KeyStore,
    SearchStore,
    HealthStore,
    AdminStore,
    AnnotationStore,
    Protocol,
):
    """The service's storage, whole. Every method may block: call from a thread."""

    @property
    def location(self) -> str:
        """Where the data is, safe to print: a file's path, or a URL without its password."""
        ...

    def close(self) -> None:
        """Let the store's connections go (this thread's, or the pool)."""
        ...

    def list_projects(self, only: str | None = None) -> list[ProjectRow]:
        """Every project (or only the one with id `only`), oldest first."""
        ...

    def get_project(self, project_id: str) -> ProjectRow | None: ...

    def list_traces(
        self,
        project_id: str,
        start: int,
        end: int,
        limit: int,
        after: TracePosition | None = None,
        kept_since: int | None = None,
    ) -> tuple[list[TraceSummary], bool]:
        """One page, newest first, of traces with start <= listed_at < end, past `after`, and
        (with `kept_since`, the project's retention) whose newest span ends at or after
        `kept_since`; and whether more follow. A late page must cost what the first costs
        (keyset paging)."""
        ...

    def models_of(
        self, project_id: str, trace_ids: list[str]
    ) -> dict[str, dict[str, tuple[float, int]]]:
        """For each of a project's traces, its spans' cost and tokens summed by model (spans
        naming one)."""
        ...

    def find_traces(self, trace_id: str, project_id: str | None = None) -> list[TraceRow]:
        """The traces with this id: in `project_id` (one at most), or in every project (a trace
        id is its project's: two projects may each have a trace with the same id)."""
        ...

    def iter_spans(self, trace_id: str, project_id: str) -> Iterator[SpanInTrace]:
        """Every span of a project's trace by start time, then id, as they are read: the hot
        path of big traces, consumed once while the answer is encoded."""
        ...

    def list_alerts(self, project_id: str) -> list[AlertRow]:
        """A project's alerts, oldest first."""
        ...

    def create_once(
        self,
        row: ProjectRow | AlertRow | DeliveryRow | ApiKeyRow,
        once: Once | None,
        status: int,
        body: object,
        also: Sequence[AlertSecretRow] = (),
        alerts_at_most: int | None = None,
    ) -> Remembered | None:
        """Insert `row` (and the rows `also`, an alert's secret) and, with `once`, remember the
        answer (`status`, JSON `body`); all in one transaction. If `once`'s key was used
        before, insert nothing and return what was remembered (the caller compares the
        request hashes). An alert whose project has `alerts_at_most` alerts already is not
        inserted: TooManyAlerts, however many creates race."""
        ...

    def forget_responses(self, created_before: int) -> int:
        """Drop remembered Idempotency-Key answers stored before `created_before` (epoch ms);
        returns how many went."""
        ...

    def opener(self) -> Callable[[], TraceStore] | None:
        """How another process opens this same store (a picklable callable: ingest worker
        processes write through it), or None if it cannot be shared that way."""
        ...

    def checkpoint(self) -> tuple[int, int]:
        """Copy what writers committed into the store's durable file, beside them (never
        waiting on a reader or a writer), and let a big log go once all of it is copied:
        stores that `opener` opens leave this to a background task, so their commits do not
        stop for it. Returns (pages logged, pages copied)."""
        ...

    def ingest(self, batches: Sequence[Sequence[SpanGroup]]) -> None:
        """Store ingested spans, all `batches` (one per request) in one transaction: a span
        replaces the stored one with its trace and span id, and the trace rows of the traces
        touched are recomputed from all their spans. A group without project_id goes to the
        project its project_name names (by id, else by name; none: the default project),
        created if missing. A trace is its project's: spans with the id of another project's
        trace make a trace of their own, so the store refuses no span it is given. Raises
        StoreBusy if other writers kept the store locked too long."""
        ...

    def add_span_logs(self, groups: Sequence[LogGroup], project_id: str | None, now: int) -> None:
        """Store GenAI log events of spans (POST /v1/logs) in `project_id`, or else the project
        each group's resource names, joined into their spans as `tracetui.logs`, whether the
        span is stored yet or comes later. Raises StoreBusy as ingest does."""
        ...

    def expire(self, now: int) -> int:
        """Delete the traces, with all their spans, whose newest span ended more than their
        project's retention_days before `now` (epoch ms), in short transactions; returns how
        many went. Bounded: what one call leaves is taken by the next."""
        ...
