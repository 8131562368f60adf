"""Who a request is, as the rate limiter counts it: its key's hash (looked up in the store, its
use noted: api_keys.KeyUsage) or else its address; and the limiters themselves, counting in
the store when replicas share it (so a key's limit holds across them), else in memory."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from fastapi import FastAPI

from tui.server.api_keys import KeyUsage
from tui.server.config import ServerConfig
from tui.server.http.ratelimit import Limiter, RateLimiter, RateLimitMiddleware, SharedRateLimiter
from tui.server.store.protocol import TraceStore
from tui.server.store.rows import KeyScope


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


def limit_requests(app: FastAPI, store: TraceStore, config: ServerConfig, usage: KeyUsage) -> None:
    """The API's and ingest's rate limits on `app` (config.rate_limit, ingest_rate_limit), as
    middleware in front of every route; known keys' uses noted by `usage`."""
    app.state.limiter = limiter_of(store, "api", config.rate_limit, config.window_s)
    app.state.ingest_limiter = limiter_of(
        store, "ingest", config.ingest_rate_limit, config.window_s
    )
    # Replicas count in the store: a key's look-up and its count in one call, instead of two
    # round trips per request.
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
