"""GET and POST /v1/projects/{project_id}/alerts: a project's threshold alerts."""

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response

from tui.server.deps import Auth, ReadableProject, StoreDep, create_once, readable_project
from tui.server.rows import new_alert
from tui.server.schemas import AlertCreate, alert_json

router = APIRouter()


@router.get("/projects/{project_id}/alerts", summary="List a project's alerts")
def list_alerts(project: ReadableProject, store: StoreDep) -> dict[str, Any]:
    return {"data": [alert_json(r) for r in store.list_alerts(project.id)]}


@router.post("/projects/{project_id}/alerts", status_code=201, summary="Create an alert")
def create_alert(
    request: Request,
    scope: Auth,
    store: StoreDep,
    project_id: Annotated[str, Path()],
    payload: AlertCreate,
) -> Response:
    readable_project(store, scope, project_id)  # after the body's validation: see deps
    row = new_alert(project_id=project_id, **payload.model_dump())
    return create_once(request, store, scope, payload, row, alert_json(row))
