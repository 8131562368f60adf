"""PhoenixClient: Arize Phoenix's REST API (and, for costs, its GraphQL) behind the interface the
screens use (tui/api/source.py), so that no screen knows which server it reads.

It is an ApiClient with other paths: the request loop, retries, pacing, the API log, the Bearer
key (Phoenix's own clients send PHOENIX_API_KEY as `Authorization: Bearer`) and the reading of
errors (Phoenix answers many of them in plain text) are the spec client's. What Phoenix has:

- `GET /v1/projects` (cursor), `POST /v1/projects`;
- `GET /v1/projects/{id}/traces` (start_time, end_time, limit <= 1000, cursor, include_spans):
  the trace list, each row's name and counts from its span summaries;
- `GET /v1/projects/{id}/spans?trace_id=...` (cursor): a trace's spans, from which the trace is
  made (there is no endpoint for one trace);
- `POST /graphql`: the costs Phoenix computes, one query per page or trace (graphql.py), and a
  project's sessions, one query per page (sessions.py);
- the trace list's own filters for a session's traces, errors and latency (filters.py).

What it has not (alerts, their history; keys, settings and alert actions: `discover_offers`
offers none) is said plainly: `has_alerts` is False and a call
raises an ApiError saying this Phoenix server has no alerts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any
from urllib.parse import quote

from tui.api.client import MAX_PAGES, ApiClient, Page, iso
from tui.api.envelopes import read_json, unwrap_record
from tui.api.errors import ApiError, BadResponse, NotFound
from tui.api.models import Alert, Project, Span, Trace, TraceFilter
from tui.api.offers import NOTHING, Offers
from tui.api.pagination import NextPage, extract_items, extract_next
from tui.api.phoenix import graphql
from tui.api.phoenix.address import phoenix_root
from tui.api.phoenix.filters import OFFERED_FILTERS, trace_filter_params
from tui.api.phoenix.mapping import read_span, read_trace_row, trace_from_spans
from tui.api.phoenix.sessions import read_sessions, sessions_query
from tui.core.alert_rules import AlertDraft
from tui.core.gcpause import gc_paused
from tui.core.secret import SecretLike

log = logging.getLogger("tracetui.api.phoenix")

MAX_LIMIT = 1000  # Phoenix refuses a larger page (HTTP 422)
SPAN_PAGE = 1000


class PhoenixClient(ApiClient):
    """Phoenix at `base_url` (http://HOST:6006, with or without /v1)."""

    has_alerts = False
    server_name = "Phoenix"
    # Set when the app found this Phoenix at an address given without a kind (open_source):
    # what the app says about it once it is up.
    recognised_note: str | None = None

    def __init__(
        self,
        base_url: str,
        api_key: str | SecretLike | None = None,
        project_keys: Mapping[str, str | SecretLike] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(phoenix_root(base_url) + "/v1", api_key, project_keys, **options)
        api_key = project_keys = None  # as ApiClient: no plain key left in this frame
        self.root_url = self.base_url.removesuffix("/v1")
        # The GlobalID of each project met by name (a --project given by name): GraphQL wants it.
        self._global_ids: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"Phoenix{super().__repr__()}"

    # -- the server ------------------------------------------------------------------------------

    async def server_version(self) -> str | None:
        """Phoenix's version as it states it (`GET /arize_phoenix_version`), or None."""
        response = await self._request("GET", f"{self.root_url}/arize_phoenix_version")
        text = response.text.strip()
        return text[:40] if text else None

    async def discover_offers(self) -> Offers:
        """None of the management actions: Phoenix's own routes (a project's DELETE among
        them) are not the ones this app's screens speak, so nothing is asked of it. What it
        does offer: the trace filters its list takes, and a project's sessions."""
        self._offers = replace(NOTHING, trace_filters=OFFERED_FILTERS, sessions=True)
        return self._offers

    def no_feature(self, feature: str) -> ApiError:
        return ApiError(f"This {self.server_name} server has no {feature}.", None)

    # -- paging over Phoenix's lists -------------------------------------------------------------

    async def _read_page(
        self,
        url: str,
        params: dict[str, Any],
        project_id: str | None,
        after: NextPage | None,
        reader: Callable[[Any], Any],
        what: str,
    ) -> Page:
        target = self._page_request(url, params, after)
        if target is None:
            return Page([], None)
        response = await self._request(
            "GET", target[0], project_id=project_id, params=target[1] or None
        )
        with gc_paused():
            body = read_json(response)
            items = extract_items(body, what)
            if items is None:
                raise BadResponse(
                    f"Phoenix's answer holds no list of {what} (HTTP {response.status_code})",
                    response.status_code,
                )
            records = [record for record in map(reader, items) if record is not None]
        return Page(records, extract_next(body, response.headers), len(items) - len(records))

    async def _every(
        self,
        url: str,
        params: dict[str, Any],
        project_id: str | None,
        reader: Callable[[Any], Any],
        what: str,
    ) -> AsyncIterator[Page]:
        seen: set[str] = set()
        after: NextPage | None = None
        for _ in range(MAX_PAGES):
            page = await self._read_page(url, params, project_id, after, reader, what)
            yield page
            after = page.next_page
            if after is None or not page.items or after.identity in seen:
                return
            seen.add(after.identity)

    # -- projects --------------------------------------------------------------------------------

    async def create_project(
        self,
        name: str,
        description: str | None = None,
        retention_days: int | None = None,
        idempotency_key: str | None = None,
    ) -> Project:
        """A new project; Phoenix keeps no retention per project here, so none is sent."""
        body: dict[str, Any] = {"name": name}
        if description:
            body["description"] = description
        return await self._create(Project, "projects", body, None, idempotency_key)

    async def find_project(
        self, name: str, description: str | None = None, retention_days: int | None = None
    ) -> Project | None:
        for project in await self.list_projects():
            if project.name == name and (project.description or None) == (description or None):
                return project
        return None

    async def _global_id(self, project_id: str) -> str:
        """The project's GlobalID: `project_id` itself, unless it was given by name."""
        if project_id in self._global_ids:
            return self._global_ids[project_id]
        try:
            response = await self._request(
                "GET", f"projects/{_segment(project_id)}", project_id=project_id
            )
            record = unwrap_record(read_json(response))
            found = record.get("id") if isinstance(record, dict) else None
        except ApiError:
            found = None
        self._global_ids[project_id] = found if isinstance(found, str) and found else project_id
        return self._global_ids[project_id]

    # -- traces ----------------------------------------------------------------------------------

    async def list_traces(
        self,
        project_id: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        limit: int | None = 100,
        after: NextPage | None = None,
        include: str | None = None,
        filters: TraceFilter | None = None,
    ) -> Page:
        """One page of traces, newest first, each with its cost (one GraphQL query a page).
        `include` (the local service's extension) is not Phoenix's: it is left out. `filters`:
        those Phoenix's list takes (filters.py; OFFERED_FILTERS is what `discover_offers`
        says), a session's traces among them; any other raises an ApiError that says so."""
        params: dict[str, Any] = {"include_spans": "true"}
        if start is not None:
            params["start_time"] = iso(start)
        if end is not None:
            params["end_time"] = iso(end)
        if limit is not None:
            params["limit"] = max(1, min(limit, MAX_LIMIT))
        if filters is not None:
            params.update(trace_filter_params(filters, self.server_name))
        url = f"projects/{_segment(project_id)}/traces"
        page = await self._read_page(url, params, project_id, after, read_trace_row, "traces")
        await self._add_trace_costs(project_id, page.items)
        return page

    async def iter_traces(
        self,
        project_id: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        limit: int | None = 500,
    ) -> AsyncIterator[Trace]:
        seen: set[str] = set()
        after: NextPage | None = None
        for _ in range(MAX_PAGES):
            page = await self.list_traces(
                project_id, start=start, end=end, limit=limit, after=after
            )
            for trace in page.items:
                yield trace
            after = page.next_page
            if after is None or not page.items or after.identity in seen:
                return
            seen.add(after.identity)

    async def _add_trace_costs(self, project_id: str, traces: list[Trace]) -> None:
        ids = [trace.id for trace in traces if trace.id]
        if not ids:
            return
        project_gid = await self._global_id(project_id)
        chunks = [
            ids[i : i + graphql.ALIASES_PER_QUERY]
            for i in range(0, len(ids), graphql.ALIASES_PER_QUERY)
        ]
        answers = await asyncio.gather(
            *(
                self._graphql(graphql.traces_costs_query(project_gid, chunk), project_id)
                for chunk in chunks
            )
        )
        costs: dict[str, float] = {}
        for chunk, answer in zip(chunks, answers, strict=True):
            costs.update(graphql.read_traces_costs(answer, chunk))
        for trace in traces:
            if trace.id in costs:
                trace.total_cost_usd = costs[trace.id]

    async def get_trace(self, trace_id: str, project_id: str | None = None) -> Trace:
        """The trace made from its spans, with the costs Phoenix computed for them. Without
        `project_id`, the first project that has spans of the trace. The costs are asked for
        while the spans' pages come (Phoenix answers one while it reads the other), so a big
        trace waits about as long as its spans alone."""
        if project_id is None:
            project_id, spans = await self._find_trace(trace_id)
            total, costs = await self._trace_costs(project_id, trace_id)
        else:
            costing = asyncio.ensure_future(self._trace_costs(project_id, trace_id))
            try:
                spans = await self.list_spans(trace_id, project_id)
            except BaseException:
                costing.cancel()
                raise
            total, costs = await costing
        if not spans:
            raise NotFound(f"No trace {trace_id} in this Phoenix project (HTTP 404)", 404)
        for span in spans:
            phoenix_id = (span.model_extra or {}).get("phoenix_id")
            if phoenix_id in costs:
                span.cost_usd = costs[phoenix_id]
        with gc_paused():
            spans.sort(key=lambda span: (span.started_at is None, span.started_at or 0))
            return trace_from_spans(trace_id, project_id, spans, total)

    async def _find_trace(self, trace_id: str) -> tuple[str, list[Span]]:
        for project in await self.list_projects():
            if project.id:
                spans = await self.list_spans(trace_id, project.id)
                if spans:
                    return project.id, spans
        raise NotFound(f"No trace {trace_id} in any project of this Phoenix (HTTP 404)", 404)

    async def list_spans(self, trace_id: str, project_id: str | None = None) -> list[Span]:
        """A trace's spans, every page."""
        if project_id is None:
            return (await self._find_trace(trace_id))[1]
        url = f"projects/{_segment(project_id)}/spans"
        params = {"trace_id": trace_id, "limit": SPAN_PAGE}
        spans: list[Span] = []
        async for page in self._every(url, params, project_id, read_span, "spans"):
            spans += page.items
        return spans

    async def _trace_costs(
        self, project_id: str, trace_id: str
    ) -> tuple[float | None, dict[str, float]]:
        project_gid = await self._global_id(project_id)
        total: float | None = None
        costs: dict[str, float] = {}
        after: str | None = None
        every_span = False
        for _ in range(MAX_PAGES):
            query = graphql.trace_costs_query(project_gid, trace_id, after, every_span)
            answer = await self._graphql(query, project_id)
            if not every_span and after is None and graphql.graphql_errors(answer) is not None:
                # A Phoenix that does not take the span filter: every span's cost, then.
                every_span = True
                answer = await self._graphql(
                    graphql.trace_costs_query(project_gid, trace_id, None, every_span), project_id
                )
            page_total, page_costs, after = graphql.read_trace_costs(answer)
            total = page_total if total is None else total
            costs.update(page_costs)
            if after is None:
                break
        return total, costs

    async def _graphql(self, body: dict[str, Any], project_id: str | None) -> Any:
        """A GraphQL answer, or None when Phoenix could not give one: costs are then not
        known, and the screens show what REST gave without them."""
        try:
            response = await self._request(
                "POST", f"{self.root_url}/graphql", project_id=project_id, body=body
            )
            answer = read_json(response)
        except ApiError as error:
            log.warning("Phoenix's GraphQL failed: %s", error.message)
            return None
        problem = graphql.graphql_errors(answer)
        if problem is not None:
            log.warning("Phoenix's GraphQL answered an error: %s", self.redact(problem)[:300])
        return answer

    # -- sessions --------------------------------------------------------------------------------

    async def list_sessions(
        self,
        project_id: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        limit: int | None = 100,
        after: NextPage | None = None,
        user_id: str | None = None,
    ) -> Page:
        """One page of a project's sessions, newest last activity first (sessions.py: one
        GraphQL query a page). Without `start` and `end`, every session of the project. A
        session's traces: `list_traces` with TraceFilter(session_id=...)."""
        query = sessions_query(
            await self._global_id(project_id), limit, after.cursor if after else None, start, end
        )
        response = await self._request(
            "POST", f"{self.root_url}/graphql", project_id=project_id, body=query
        )
        answer = read_json(response)
        problem = graphql.graphql_errors(answer)
        if problem is not None:
            raise BadResponse(f"Phoenix could not list the sessions: {self.redact(problem)[:300]}")
        sessions, cursor, unreadable = read_sessions(answer, user_id)
        return Page(sessions, NextPage(cursor=cursor) if cursor else None, unreadable)

    # -- what Phoenix has not --------------------------------------------------------------------

    async def list_alerts(self, project_id: str) -> list[Alert]:
        raise self.no_feature("alerts")

    async def list_alert_events(self, project_id: str, alert_id: str, limit: int = 50) -> Page:
        raise self.no_feature("alerts")

    async def create_alert(
        self, project_id: str, draft: AlertDraft, idempotency_key: str | None = None
    ) -> Alert:
        raise self.no_feature("alerts")

    async def find_alert(self, project_id: str, draft: AlertDraft) -> Alert | None:
        raise self.no_feature("alerts")


def _segment(value: str) -> str:
    """An id or name made safe as one path segment."""
    return quote(value, safe="").replace(".", "%2E")
