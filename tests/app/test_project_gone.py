"""A trace list whose project is gone from the server (the service restarted on a new database):
the server is reachable and says 404 for the project, so the list says the project is gone, not
that the server cannot be reached; live mode stops; esc goes back to the projects, listed again.
With Pilot against the real local service, the network cut and restored by the transport."""

from __future__ import annotations

import uuid

import httpx

from tests.support.app import loaded_traces, rendered_text, running_app, showing, wait_for
from tests.support.builders import add_bulk_traces
from tests.support.service import RunningService
from tui.server.store.rows import now_ms
from tui.ui.app import StartAt
from tui.ui.screens.projects import ProjectsScreen


async def test_a_project_gone_from_the_server_is_said_and_live_stops(
    service: RunningService,
) -> None:
    project = f"proj_gone_{uuid.uuid4().hex[:6]}"
    with service.store.transaction() as db:
        service.store.insert_project(db, project, None, 30, project_id=project)
    add_bulk_traces(service.store, project, 5, now_ms())
    down = {"now": False}
    real = httpx.AsyncHTTPTransport()

    async def handler(request: httpx.Request) -> httpx.Response:
        if down["now"]:
            raise httpx.ConnectError("the service is restarting", request=request)
        response = await real.handle_async_request(request)
        await response.aread()
        return response

    transport = httpx.MockTransport(handler)
    async with running_app(service, StartAt(project_id=project), transport=transport) as (
        app,
        pilot,
    ):
        screen = await loaded_traces(app, pilot)
        await pilot.press("L")
        assert screen.state.live
        # The service goes away: the status line says it cannot be reached.
        down["now"] = True
        screen.poll_new()
        await wait_for(pilot, lambda: app.problem is not None, what="cannot reach")
        # It comes back on another database: the project is gone.
        headers = {"Authorization": f"Bearer {service.keys.workspace}"}
        async with httpx.AsyncClient(headers=headers) as http:
            gone = await http.delete(f"{service.base_url}/projects/{project}")
        assert gone.status_code == 204
        down["now"] = False
        screen.poll_new()

        def said() -> str:
            return " ".join(rendered_text(screen.query_one("#header")).split())

        await wait_for(pilot, lambda: "project gone" in said(), what="the project is gone")
        assert not screen.state.live and screen.live_timer is None and "live" not in said()
        assert app.problem is None  # the server answered: it is reachable
        assert "(esc)" in said()
        told = [str(n.message) for n in app._notifications if n.title == "Project gone"]
        assert len(told) == 1 and "esc goes back to the projects" in told[0]
        # r asks again: the same answer, said in place, told once, no "Not found" toast.
        await pilot.press("r")
        await wait_for(pilot, lambda: not screen.fetching and "project gone" in said())
        assert not [n for n in app._notifications if "404" in str(n.title)]
        assert len([n for n in app._notifications if n.title == "Project gone"]) == 1
        await pilot.press("escape")
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))
        projects = app.screen
        assert isinstance(projects, ProjectsScreen)
        await wait_for(
            pilot,
            lambda: bool(app.projects) and project not in {p.id for p in app.projects},
            what="the projects listed again, without it",
        )
