"""GET and POST /v1/projects: a workspace key sees and creates every project, a project key
sees its own. Extensions: GET one project, PATCH (name, description, retention, saying how many traces a
shorter retention deletes; ?dry_run=true changes nothing) and DELETE (the project with its
traces, alerts and keys), by the workspace key only."""

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, Response

from tui.server.answers import ERRORS, Project, ProjectChanged, ProjectList
from tui.server.deps import (
    DAY_MS,
    Auth,
    ClockDep,
    ReadableProject,
    StoreDep,
    apply_once,
    create_once,
    readable_project,
)
from tui.server.errors import ServiceError
from tui.server.rows import new_project
from tui.server.schemas import ProjectCreate, ProjectUpdate, project_json

WORKSPACE_ONLY = "Only the workspace key can change or delete projects."

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


@router.get("/projects/{project_id}", summary="Get one project", response_model=Project)
def get_project(project: ReadableProject) -> Response:
    return JSONResponse(project_json(project))


@router.patch(
    "/projects/{project_id}",
    summary="Change a project's name, description or retention",
    response_model=ProjectChanged,
)
def update_project(
    request: Request,
    scope: Auth,
    store: StoreDep,
    clock: ClockDep,
    project_id: Annotated[str, Path()],
    payload: ProjectUpdate,
    dry_run: Annotated[
        bool, Query(description="Change nothing: answer what the change would do.")
    ] = False,
) -> Response:
    project = readable_project(store, scope, project_id)  # after the body's validation
    if not scope.is_workspace:
        raise ServiceError(403, "forbidden", WORKSPACE_ONLY)
    changed = project._replace(**payload.changes())
    to_delete = 0
    if changed.retention_days < project.retention_days:
        cutoff = clock() - changed.retention_days * DAY_MS
        to_delete = store.count_traces_ending_before(project.id, cutoff)
    body: dict[str, Any] = {**project_json(changed), "traces_to_delete": to_delete}
    if dry_run:
        return JSONResponse(body)

    def change() -> tuple[int, dict[str, Any]]:
        store.update_project(changed)
        return 200, body

    return apply_once(request, store, scope, {"patch": payload.changes()}, change)


@router.delete(
    "/projects/{project_id}",
    status_code=204,
    summary="Delete a project with its traces, alerts and keys",
)
def delete_project(
    request: Request, scope: Auth, store: StoreDep, project_id: Annotated[str, Path()]
) -> Response:
    def delete() -> tuple[int, None]:
        # In here: a repeat of a deletion answers as the first did, though the project is gone.
        project = readable_project(store, scope, project_id)
        if not scope.is_workspace:
            raise ServiceError(403, "forbidden", WORKSPACE_ONLY)
        if not store.delete_project(project.id):
            raise ServiceError(404, "not_found", "No project with this id.")
        return 204, None

    return apply_once(request, store, scope, {"delete": project_id}, delete)
