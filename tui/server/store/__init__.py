"""The service's storage: one protocol (`protocol.TraceStore`) that routes, ingest, alerts and
background tasks see, the named rows it speaks in (`rows`), and two backends side by side:
`sqlite` (the embedded default) and `postgres` (psycopg 3, for a shared database and replicas).
`opening.open_store` opens the one a `--db` value names (`url`)."""
