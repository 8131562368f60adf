"""ApiClient: the tracing service's v1 API (the spec), as a TraceSource (source.py).

The calls here differ only in the paths they ask and the records they read: the transport
(transport.py) sends them, with the keys, retries, waits and the API log; pages.py pages them.
The calls a server may offer beyond the spec are in manage.py (ManageCalls: keys, project and
alert changes) and annotations.py (AnnotationCalls, on top of it, which this class extends).
"""

from __future__ import annotations

from typing import Any

from tui.api.annotations import AnnotationCalls
from tui.api.envelopes import read_json, unwrap_record
from tui.api.errors import BadResponse
from tui.api.health import HealthReport, read_health
from tui.api.listing import Listing, SessionListing, TraceListing
from tui.api.models import Alert, AlertEvent, Project, Session, Span, Trace
from tui.api.pages import Page, records_of
from tui.api.params import iso, segment
from tui.api.readers import has_spans, read_trace, read_trace_fast
from tui.core.alert_rules import AlertDraft
from tui.core.gcpause import gc_paused


class ApiClient(AnnotationCalls):
    """The v1 API. Use as `async with ApiClient(base_url, key, project_keys) as client:`."""

    has_alerts = True

    async def list_projects(self) -> list[Project]:
        return await self._all(Project, "projects", "projects")

    async def _traces(self, listing: TraceListing) -> Page:
        params = {"project_id": listing.project_id, **_window_params(listing)}
        if listing.include:
            params["include"] = listing.include
        if listing.filters is not None:
            params.update(listing.filters.params())
        return await self._page(
            records_of(Trace), "traces", "traces", params, listing.project_id, listing.after
        )

    async def _sessions(self, listing: SessionListing) -> Page:
        """A server without sessions answers 404, NotFound (offers.sessions says beforehand)."""
        params = _window_params(listing)
        if listing.user_id:
            params["user_id"] = listing.user_id
        url = f"projects/{segment(listing.project_id)}/sessions"
        return await self._page(
            records_of(Session), "sessions", url, params, listing.project_id, listing.after
        )

    async def get_trace(self, trace_id: str, project_id: str | None = None) -> Trace:
        """One trace with its spans (fetched from /spans if the server left them out). With
        `project_id`, that project's trace: servers that scope trace ids by project (the local
        service) read it as the project whose trace this is; others ignore it."""
        response = await self.transport.request(
            "GET",
            f"traces/{segment(trace_id)}",
            project_id=project_id,
            params=_in_project(project_id) or None,
        )
        with gc_paused():  # a big trace is a million small objects: see tui/core/gcpause.py
            trace = read_trace_fast(response.content)
            if trace is not None:
                return trace
            body = unwrap_record(read_json(response))
            if not isinstance(body, dict):
                raise BadResponse(
                    f"The server's answer is not a trace (HTTP {response.status_code})"
                )
            trace = read_trace(body)
        if not has_spans(body):
            trace.spans = await self.list_spans(trace_id, project_id)
        return trace

    async def list_spans(self, trace_id: str, project_id: str | None = None) -> list[Span]:
        url = f"traces/{segment(trace_id)}/spans"
        return await self._all(Span, "spans", url, project_id, _in_project(project_id))

    async def project_health(self, window: str = "1h", buckets: int = 12) -> HealthReport:
        """See TraceSource.project_health: GET /projects/health, with the default key (a
        project key's answer holds its own project only)."""
        params = {"window": window, "buckets": buckets}
        response = await self.transport.request("GET", "projects/health", params=params)
        return read_health(read_json(response), response.status_code)

    # -- alerts ----------------------------------------------------------------------------------

    async def list_alerts(self, project_id: str) -> list[Alert]:
        url = f"projects/{segment(project_id)}/alerts"
        return await self._all(Alert, "alerts", url, project_id)

    async def list_alert_events(self, project_id: str, alert_id: str, limit: int = 50) -> Page:
        """The newest page of an alert's history, on servers that keep one (an extension: a
        server that does not answers 404, NotFound)."""
        url = f"projects/{segment(project_id)}/alerts/{segment(alert_id)}/events"
        return await self._page(records_of(AlertEvent), "events", url, {"limit": limit}, project_id)

    async def create_alert(
        self, project_id: str, draft: AlertDraft, idempotency_key: str | None = None
    ) -> Alert:
        url = f"projects/{segment(project_id)}/alerts"
        alert = await self._create(Alert, url, draft.body(), project_id, idempotency_key)
        if alert.webhook_secret is not None:  # shown once by the app, scrubbed everywhere else
            self.transport.keys.remember(alert.webhook_secret)
        return alert

    async def find_alert(self, project_id: str, draft: AlertDraft) -> Alert | None:
        """An alert of the project with exactly these fields, if one exists: after a create
        whose outcome is unknown, whether it was carried out."""
        return _first_like(await self.list_alerts(project_id), draft.body())


def _window_params(listing: Listing) -> dict[str, Any]:
    """The spec's query for a listing's time range and page size."""
    params: dict[str, Any] = {}
    if listing.start is not None:
        params["from"] = iso(listing.start)
    if listing.end is not None:
        params["to"] = iso(listing.end)
    if listing.limit is not None:
        params["limit"] = listing.limit
    return params


def _first_like(records: list[Alert], body: dict[str, Any]) -> Alert | None:
    """The first record whose fields equal every field of a create's body."""
    for record in records:
        if all(getattr(record, field, None) == value for field, value in body.items()):
            return record
    return None


def _in_project(project_id: str | None) -> dict[str, Any]:
    """The query that names a trace's project, when it is known."""
    return {"project_id": project_id} if project_id else {}
