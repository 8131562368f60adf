"""The local service as a FastAPI app: routers, error handlers, the rate-limit middleware, and
the lifespan that starts and stops the background tasks.

Auth is `Authorization: Bearer <key>`: the workspace key reaches everything, a project key only
its own project (403 elsewhere). The routes live in `routes/` (one router per resource), what
they share in `deps`, the error body in `errors`, the background tasks in `background`.
"""

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial

from fastapi import FastAPI

from tui.server.alerts.service import Alerts
from tui.server.alerts.targets import Resolver, system_resolver
from tui.server.api_keys import KeyUsage
from tui.server.background import Background, PeriodicTask, default_tasks, new_replica_id
from tui.server.config import ServerConfig
from tui.server.http.errors import install_error_handlers
from tui.server.http.ratelimit import Limiter, RateLimiter, RateLimitMiddleware, SharedRateLimiter
from tui.server.ingest.costs import warm_in_background
from tui.server.ingest.processes import IngestProcesses
from tui.server.ingest.writer import IngestWriter
from tui.server.routes import ROUTERS
from tui.server.routes.otlp import Ingest
from tui.server.store.protocol import TraceStore
from tui.server.store.rows import KeyScope, now_ms


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    background: Background = app.state.background
    writer: IngestWriter = app.state.ingest.writer
    processes: IngestProcesses = app.state.ingest.processes
    writer.start()
    processes.start()  # in the background: the writer thread ingests until they are up
    if not processes.processes:
        # The price table takes ~0.5 s to import: load it now, beside the first requests
        # (worker processes load their own).
        warm_in_background()
    await background.start()
    try:
        yield
    finally:
        await background.stop()
        processes.stop()
        writer.stop()


def key_identity(
    store: TraceStore, key: str, usage: KeyUsage | None = None
) -> tuple[str, KeyScope] | None:
    """The identity the rate limiter counts a known key by (its hash) and the key's scope,
    which the routes reuse (deps.scope_of); None if unknown. A known key's use is noted."""
    scope = store.key_scope(key)
    if scope is None:
        return None
    if usage is not None:
        usage.note(scope.key_hash)
    return scope.key_hash, scope


def key_identity_counted(
    count_key: Callable[[str, str, int], tuple[KeyScope, int] | None],
    key: str,
    bucket: str,
    window_start: int,
    usage: KeyUsage | None = None,
) -> tuple[str, KeyScope, int] | None:
    """key_identity and the request counted in the shared limiter's `bucket`, in one store
    call (`count_key`: PostgresStore.key_scope_counted); None if the key is unknown."""
    found = count_key(key, bucket, window_start)
    if found is None:
        return None
    scope, count = found
    if usage is not None:
        usage.note(scope.key_hash)
    return scope.key_hash, scope, count


def limiter_of(store: TraceStore, name: str, limit: int, window_s: float) -> Limiter:
    """A rate limiter counting in `store` when other replicas share it, else in memory."""
    if store.is_shared():
        return SharedRateLimiter(
            name, store.count_requests, store.forget_request_counts, limit, window_s
        )
    return RateLimiter(limit, window_s)


def create_app(
    store: TraceStore,
    config: ServerConfig,
    *,
    tasks: Sequence[PeriodicTask] | None = None,
    clock: Callable[[], int] = now_ms,
    resolve: Resolver = system_resolver,
) -> FastAPI:
    """The service over `store`, as `config` says (rate limits, alert interval, webhooks,
    ingest workers), running `tasks` in the background (None: background.default_tasks, which
    evaluate alerts every `config.alert_interval_s` seconds, or only when asked if it is 0).
    `clock` (epoch ms) is what retention, ingest and alerts call now; webhook host names are
    looked up with `resolve`."""
    app = FastAPI(
        title="tracetui local tracing service",
        version="1.0.0",
        openapi_url="/v1/openapi.json",
        docs_url="/docs",
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.store = store  # read by deps.store_of
    app.state.clock = clock  # read by deps.clock_of
    replica = new_replica_id()  # this service among those sharing its store
    alerts = Alerts(
        store,
        clock,
        interval_s=config.alert_interval_s or None,
        allow_private=config.allow_private_webhooks,
        resolve=resolve,
        timeout_s=config.webhook_timeout_s,
        replica=replica,
    )
    app.state.alerts = alerts  # read by deps.alerts_of
    app.state.background = Background(
        default_tasks(store, clock, alerts, replica) if tasks is None else tasks,
        workers=[alerts],
    )
    # Worker processes open the store themselves, if it can be opened from another process.
    processes = IngestProcesses(config.workers, store.opener())
    app.state.ingest = Ingest(IngestWriter(store), processes)
    app.state.limiter = limiter_of(store, "api", config.rate_limit, config.window_s)
    app.state.ingest_limiter = limiter_of(
        store, "ingest", config.ingest_rate_limit, config.window_s
    )
    usage = KeyUsage(store, clock)
    # Replicas count in the store: a key's look-up and its count in one call where the store
    # has one (PostgreSQL), instead of two round trips per request.
    count_key = store.key_scope_counted if store.is_shared() else None
    app.add_middleware(
        RateLimitMiddleware,
        limiter=app.state.limiter,
        ingest_limiter=app.state.ingest_limiter,
        identify=partial(key_identity, store, usage=usage),
        identify_counted=None
        if count_key is None
        else partial(key_identity_counted, count_key, usage=usage),
    )
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router, prefix="/v1")
    return app
