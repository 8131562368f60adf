"""GET and POST /v1/projects: a workspace key sees and creates every project, a project key
sees its own."""

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from tui.server.answers import ERRORS, Project, ProjectList
from tui.server.deps import Auth, StoreDep, create_once
from tui.server.errors import ServiceError
from tui.server.rows import new_project
from tui.server.schemas import ProjectCreate, project_json

router = APIRouter(responses=ERRORS)


@router.get("/projects", summary="List projects", response_model=ProjectList)
def list_projects(scope: Auth, store: StoreDep) -> Response:
    rows = store.list_projects(only=scope.project_id)
    return JSONResponse({"data": [project_json(r) for r in rows]})


@router.post("/projects", status_code=201, summary="Create a project", response_model=Project)
def create_project(
    request: Request, scope: Auth, store: StoreDep, payload: ProjectCreate
) -> Response:
    if not scope.is_workspace:
        raise ServiceError(403, "forbidden", "Only the workspace key can create projects.")
    row = new_project(payload.name, payload.description, payload.retention_days)
    return create_once(request, store, scope, payload, row, project_json(row))
