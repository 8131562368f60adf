"""The tracing service: the v1 API, OTLP ingest, alert evaluation and signed webhooks, over a
store of either backend (SQLite, embedded; PostgreSQL, shared by replicas).

May import: nothing of tracetui outside this package. The client (`tui.api`) does not import it
either: the client must not assume this service's shapes, because real deployments differ.
FastAPI and uvicorn are imported only inside this package. The demo's data lives in `tui.demo`.

Its plan, by folder: `http/` (the HTTP edge: auth, limits, errors, cursors, what routes share,
request bodies and answers), `routes/` (one router per resource), `ingest/` (OTLP bodies to
spans, in worker processes or a writer thread), `search/` (what a trace is found by), `alerts/`
(evaluation, outbox, signed delivery) and `store/` (the one protocol, with `sqlite/` and
`postgres/` side by side). Loose: `app` (create_app), `config` (ServerConfig, passed whole),
`run` (LocalService, serve), `background` (periodic tasks under leases), `api_keys` (how keys are
made, named and revoked) and `keys_cli` (`tracetui keys`).
"""
