"""The service's routes, one router per resource; create_app mounts them all under /v1."""

from fastapi import APIRouter

from tui.server.routes import (
    alerts,
    annotations,
    keys,
    otlp,
    projects,
    sessions,
    telemetry,
    traces,
)

# In this order: it is the order of the paths in the OpenAPI document.
ROUTERS: tuple[APIRouter, ...] = (
    projects.router,
    traces.router,
    otlp.router,
    telemetry.router,
    alerts.router,
    keys.router,
    sessions.router,
    annotations.router,
)
