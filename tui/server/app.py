"""The local service as a FastAPI app: routers, error handlers, the rate-limit middleware, and
the lifespan that starts and stops the background tasks.

Auth is `Authorization: Bearer <key>`: the workspace key reaches everything, a project key only
its own project (403 elsewhere). The routes live in `routes/` (one router per resource), what
they share in `http/deps`, the error body in `http/errors`, who a request is and its rate limit
in `http/identity` and `http/ratelimit`, the background tasks in `background`.
"""

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

from fastapi import FastAPI

from tui.server.alerts.service import Alerts
from tui.server.alerts.targets import Resolver, system_resolver
from tui.server.api_keys import KeyUsage
from tui.server.background import Background, PeriodicTask, default_tasks, new_replica_id
from tui.server.config import ServerConfig
from tui.server.http.errors import install_error_handlers
from tui.server.http.identity import limit_requests
from tui.server.http.searches import SearchLimits
from tui.server.ingest.costs import warm_in_background
from tui.server.ingest.processes import IngestProcesses
from tui.server.ingest.writer import IngestWriter
from tui.server.routes import ROUTERS
from tui.server.routes.otlp import Ingest
from tui.server.store.protocol import TraceStore
from tui.server.store.rows import now_ms


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
    app.state.clock = clock  # read by deps.clock_of; app.state.alerts by deps.alerts_of
    # Named among the services sharing its store by new_replica_id.
    alerts = app.state.alerts = Alerts.configured(store, clock, config, resolve, new_replica_id())
    tasks = default_tasks(store, clock, alerts, alerts.replica) if tasks is None else tasks
    app.state.background = Background(tasks, workers=[alerts])
    # Worker processes open the store themselves, if it can be opened from another process.
    app.state.ingest = Ingest(IngestWriter(store), IngestProcesses(config.workers, store.opener()))
    limit_requests(app, store, config, KeyUsage(store, clock))
    app.state.searches = SearchLimits.configured(config)  # read by http.searches.searched
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router, prefix="/v1")
    return app
