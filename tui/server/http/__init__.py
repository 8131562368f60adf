"""The service's HTTP edge, around and below the routes: the Authorization header (`auth`), the
limits below FastAPI (`limits`: heads, idle connections) and the rate limiter (`ratelimit`),
the one error body (`errors`), cursors (`paging`), what the routes share (`deps`), request
bodies and answers (`schemas`) and what /v1/openapi.json says of them (`answers`), and a key's
last use (`key_usage`)."""
