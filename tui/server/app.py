"""The local service as a FastAPI app: routers, error handlers and the rate-limit middleware.

Auth is `Authorization: Bearer <key>`: the workspace key reaches everything, a project key only
its own project (403 elsewhere). The routes live in `routes/` (one router per resource), what
they share in `deps`, the error body in `errors`.
"""

from fastapi import FastAPI

from tui.server.backend import TraceStore
from tui.server.errors import install_error_handlers
from tui.server.ratelimit import RateLimiter, RateLimitMiddleware
from tui.server.routes import ROUTERS


def create_app(store: TraceStore, rate_limit: int = 1000, window_s: float = 60.0) -> FastAPI:
    """The service over `store`, limited to `rate_limit` requests per `window_s` per key."""
    app = FastAPI(
        title="tracetui local tracing service",
        version="1.0.0",
        openapi_url="/v1/openapi.json",
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.store = store  # read by deps.store_of
    app.state.limiter = RateLimiter(rate_limit, window_s)
    app.add_middleware(RateLimitMiddleware, limiter=app.state.limiter)
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router, prefix="/v1")
    return app
