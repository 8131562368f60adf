"""The tracing service: the v1 API, OTLP ingest, alert evaluation and signed webhooks, over a
store (SQLite).

May import: nothing of tracetui outside this package. The client (`tui.api`) does not import it
either: the client must not assume this service's shapes, because real deployments differ.
FastAPI and uvicorn are imported only inside this package. The demo's data lives in `tui.demo`.
Its options are one `config.ServerConfig`, passed whole; its answers' shapes are in `answers`.
"""
