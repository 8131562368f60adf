"""The service's HTTP edge, around and below the routes: the Authorization header (`auth`), the
limits below FastAPI (`limits`: heads, idle connections), who a request is and the rate limiter
(`identity`, `ratelimit`), the one error body (`errors`), cursors (`paging`), what the routes
share (`deps`), request bodies and the JSON of answers (`schemas`) and what /v1/openapi.json
says of every answer (`answers`)."""
