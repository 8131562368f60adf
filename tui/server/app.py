"""The local service as a FastAPI app: routers, error handlers, the rate-limit middleware, and
the lifespan that starts and stops the background tasks.

Auth is `Authorization: Bearer <key>`: the workspace key reaches everything, a project key only
its own project (403 elsewhere). The routes live in `routes/` (one router per resource), what
they share in `deps`, the error body in `errors`, the background tasks in `background`.
"""

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from fastapi import FastAPI

from tui.server.backend import TraceStore
from tui.server.background import Background, PeriodicTask, default_tasks
from tui.server.errors import install_error_handlers
from tui.server.ratelimit import RateLimiter, RateLimitMiddleware
from tui.server.routes import ROUTERS


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    background: Background = app.state.background
    await background.start()
    try:
        yield
    finally:
        await background.stop()


def create_app(
    store: TraceStore,
    rate_limit: int = 1000,
    window_s: float = 60.0,
    tasks: Sequence[PeriodicTask] | None = None,
) -> FastAPI:
    """The service over `store`, limited to `rate_limit` requests per `window_s` per key,
    running `tasks` in the background (by default, background.default_tasks)."""
    app = FastAPI(
        title="tracetui local tracing service",
        version="1.0.0",
        openapi_url="/v1/openapi.json",
        docs_url="/docs",
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.store = store  # read by deps.store_of
    app.state.background = Background(default_tasks(store) if tasks is None else tasks)
    app.state.limiter = RateLimiter(rate_limit, window_s)
    app.add_middleware(RateLimitMiddleware, limiter=app.state.limiter)
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router, prefix="/v1")
    return app
