"""The service's routes, one router per resource; create_app mounts them all under /v1."""

from fastapi import APIRouter

from tui.server.routes import (
    alerts,
    annotations,
    health,
    keys,
    otlp,
    projects,
    sessions,
    telemetry,
    traces,
)

# In this order: it is the order of the paths in the OpenAPI document, and the order routes are
# matched in (/projects/health before /projects/{project_id}).
ROUTERS: tuple[APIRouter, ...] = (
    health.router,
    projects.router,
    traces.router,
    otlp.router,
    telemetry.router,
    alerts.router,
    keys.router,
    sessions.router,
    annotations.router,
)
