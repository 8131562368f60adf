"""The local tracing service: a real implementation of the v1 API over SQLite, with demo data.

Nothing here is imported by the client (`tui.api`): the client must not assume this service's
shapes, because real deployments differ. FastAPI and uvicorn are imported only inside this package.
"""
