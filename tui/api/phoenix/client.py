"""PhoenixClient: Arize Phoenix's REST API (and, for costs and sessions, its GraphQL) as a
TraceSource (tui/api/source.py), so that no screen knows which server it reads.

It shares with the spec's client only what every source has: the transport (the request loop,
retries, pacing, the API log, the Bearer key: Phoenix's own clients send PHOENIX_API_KEY as
`Authorization: Bearer`, and the reading of errors, which Phoenix answers in plain text as often
as not) and the one paging helper. What Phoenix has:

- `GET /v1/projects` (cursor), `POST /v1/projects`;
- `GET /v1/projects/{id}/traces` (start_time, end_time, limit <= 1000, cursor, include_spans):
  the trace list, each row's name and counts from its span summaries;
- `GET /v1/projects/{id}/spans?trace_id=...` (cursor): a trace's spans, from which the trace is
  made (there is no endpoint for one trace);
- `POST /graphql`: the costs Phoenix computes, one query per page or trace (graphql.py), and a
  project's sessions, one query per page (sessions.py);
- the trace list's own filters for a session's traces, errors and latency (filters.py);
- span, trace and session annotations and notes (annotations.py, which this class extends).

What it has not (alerts, their history; keys, settings and alert actions) it says plainly, as
any source: `has_alerts` is False, `discover_offers` offers none of the management calls, and a
call raises an ApiError that says this Phoenix server has no alerts (or does not offer it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from functools import cached_property
from typing import Any

from tui.api.envelopes import read_json, unwrap_record
from tui.api.errors import ApiError, BadResponse, NotFound
from tui.api.listing import SessionListing, TraceListing
from tui.api.models import Project, Span, Trace
from tui.api.offers import NOTHING, Offers
from tui.api.pages import Page, each_read_by, every_page
from tui.api.pagination import NextPage
from tui.api.params import iso, segment
from tui.api.phoenix import graphql
from tui.api.phoenix.address import phoenix_root
from tui.api.phoenix.annotation_mapping import annotate_trace, row_summary
from tui.api.phoenix.annotations import PhoenixAnnotationCalls
from tui.api.phoenix.filters import OFFERED_FILTERS, trace_filter_params
from tui.api.phoenix.mapping import read_span, read_trace_row, trace_from_spans
from tui.api.phoenix.sessions import read_sessions, sessions_query
from tui.api.phoenix.trace_annotations import TraceAnnotationReads
from tui.core.gcpause import gc_paused

log = logging.getLogger("tracetui.api.phoenix")

MAX_LIMIT = 1000  # Phoenix refuses a larger page (HTTP 422)
SPAN_PAGE = 1000


class PhoenixClient(PhoenixAnnotationCalls):
    """Phoenix at `base_url` (http://HOST:6006, with or without /v1)."""

    server_name = "Phoenix"

    @staticmethod
    def api_address(base_url: str) -> str:
        """Phoenix's REST API is under /v1 of its root, given with or without /v1."""
        return phoenix_root(base_url) + "/v1"

    @property
    def root_url(self) -> str:
        """Phoenix's root (its GraphQL and version live there, beside /v1)."""
        return self.base_url.removesuffix("/v1")

    @cached_property
    def _global_ids(self) -> dict[str, str]:
        """The GlobalID of each project met by name (a --project given by name): GraphQL
        wants it."""
        return {}

    # -- the server ------------------------------------------------------------------------------

    async def discover_offers(self) -> Offers:
        """None of the management actions: Phoenix's own routes (a project's DELETE among
        them) are not the ones this app's screens speak, so nothing is asked of it. What it
        does offer: the trace filters its list takes, a project's sessions, and annotations
        (annotations.py: what Phoenix cannot do of them is said when asked)."""
        self._offers = replace(
            NOTHING, trace_filters=OFFERED_FILTERS, sessions=True, annotations=True
        )
        return self._offers

    # -- projects --------------------------------------------------------------------------------

    async def list_projects(self) -> list[Project]:
        return await self._all(Project, "projects", "projects")

    def _project_body(
        self, name: str, description: str | None, retention_days: int | None
    ) -> dict[str, Any]:
        """Phoenix keeps no retention per project here, so none is sent."""
        return super()._project_body(name, description, None)

    async def _global_id(self, project_id: str) -> str:
        """The project's GlobalID: `project_id` itself, unless it was given by name."""
        if project_id in self._global_ids:
            return self._global_ids[project_id]
        try:
            response = await self.transport.request(
                "GET", f"projects/{segment(project_id)}", project_id=project_id
            )
            record = unwrap_record(read_json(response))
            found = record.get("id") if isinstance(record, dict) else None
        except ApiError:
            found = None
        self._global_ids[project_id] = found if isinstance(found, str) and found else project_id
        return self._global_ids[project_id]

    # -- traces ----------------------------------------------------------------------------------

    async def _traces(self, listing: TraceListing) -> Page:
        """Newest first, each with its cost and the summary of its own annotations (not its
        spans': Phoenix has no such field on a trace), one GraphQL query a page. `include` (the
        local service's extension) is not Phoenix's: it is left out. `filters`: those Phoenix's
        list takes (filters.py; OFFERED_FILTERS is what `discover_offers` says), a session's
        traces among them; any other raises an ApiError that says so."""
        params: dict[str, Any] = {"include_spans": "true"}
        if listing.start is not None:
            params["start_time"] = iso(listing.start)
        if listing.end is not None:
            params["end_time"] = iso(listing.end)
        if listing.limit is not None:
            params["limit"] = max(1, min(listing.limit, MAX_LIMIT))
        if listing.filters is not None:
            params.update(trace_filter_params(listing.filters, self.server_name))
        url = f"projects/{segment(listing.project_id)}/traces"
        rows = each_read_by(read_trace_row)
        page = await self._page(rows, "traces", url, params, listing.project_id, listing.after)
        await self._add_trace_costs(listing.project_id, page.items)
        return page

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
        annotations: dict[str, list[Any]] = {}
        for chunk, answer in zip(chunks, answers, strict=True):
            costs.update(graphql.read_traces_costs(answer, chunk))
            annotations.update(graphql.read_traces_annotations(answer, chunk))
        for trace in traces:
            if trace.id in costs:
                trace.total_cost_usd = costs[trace.id]
            if trace.id in annotations:
                trace.annotations = row_summary(annotations[trace.id])

    async def get_trace(self, trace_id: str, project_id: str | None = None) -> Trace:
        """The trace made from its spans, with the costs Phoenix computed for them. Without
        `project_id`, the first project that has spans of the trace. The costs are asked for
        while the spans' pages come (Phoenix answers one while it reads the other), so a big
        trace waits about as long as its spans alone. Its annotations' summaries (the trace's
        and each span's, as the local service sends them) are read meanwhile too
        (trace_annotations.py)."""
        if project_id is None:
            project_id, spans = await self._find_trace(trace_id)
            costing = asyncio.ensure_future(self._trace_costs(project_id, trace_id))
            reads = TraceAnnotationReads(self, project_id, trace_id)
            reads.add_spans(spans)
        else:
            costing = asyncio.ensure_future(self._trace_costs(project_id, trace_id))
            reads = TraceAnnotationReads(self, project_id, trace_id)
            try:
                spans = []
                async for page in self._span_pages(trace_id, project_id):
                    spans += page.items
                    reads.add_spans(page.items)
            except BaseException:
                costing.cancel()
                reads.cancel()
                raise
        if not spans:
            costing.cancel()
            reads.cancel()
            raise NotFound(f"No trace {trace_id} in this Phoenix project (HTTP 404)", 404)
        try:
            annotations = await reads.annotations()
        except BaseException:
            costing.cancel()
            raise
        total, costs = await costing
        for span in spans:
            phoenix_id = (span.model_extra or {}).get("phoenix_id")
            if phoenix_id in costs:
                span.cost_usd = costs[phoenix_id]
        with gc_paused():
            spans.sort(key=lambda span: (span.started_at is None, span.started_at or 0))
            trace = trace_from_spans(trace_id, project_id, spans, total)
        if annotations is not None:
            annotate_trace(trace, annotations)
        return trace

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
        spans: list[Span] = []
        async for page in self._span_pages(trace_id, project_id):
            spans += page.items
        return spans

    def _span_pages(self, trace_id: str, project_id: str) -> AsyncIterator[Page]:
        url = f"projects/{segment(project_id)}/spans"
        params = {"trace_id": trace_id, "limit": SPAN_PAGE}
        return every_page(
            lambda after: self._page(
                each_read_by(read_span), "spans", url, params, project_id, after
            )
        )

    async def _trace_costs(
        self, project_id: str, trace_id: str
    ) -> tuple[float | None, dict[str, float]]:
        """The trace's total cost and each span's, paged by GraphQL's cursor."""
        project_gid = await self._global_id(project_id)
        every_span = False

        async def costs_page(after: NextPage | None) -> Page:
            nonlocal every_span
            cursor = after.cursor if after else None
            query = graphql.trace_costs_query(project_gid, trace_id, cursor, every_span)
            answer = await self._graphql(query, project_id)
            if not every_span and cursor is None and graphql.graphql_errors(answer) is not None:
                # A Phoenix that does not take the span filter: every span's cost, then.
                every_span = True
                query = graphql.trace_costs_query(project_gid, trace_id, None, every_span)
                answer = await self._graphql(query, project_id)
            total, costs, next_cursor = graphql.read_trace_costs(answer)
            return Page([(total, costs)], NextPage(cursor=next_cursor) if next_cursor else None)

        total: float | None = None
        costs: dict[str, float] = {}
        async for page in every_page(costs_page):
            page_total, page_costs = page.items[0]
            total = page_total if total is None else total
            costs.update(page_costs)
        return total, costs

    async def _graphql(self, body: dict[str, Any], project_id: str | None) -> Any:
        """A GraphQL answer, or None when Phoenix could not give one: costs are then not
        known, and the screens show what REST gave without them."""
        try:
            response = await self.transport.request(
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

    async def _sessions(self, listing: SessionListing) -> Page:
        """One GraphQL query a page (sessions.py). Without `start` and `end`, every session of
        the project. A session's traces: `list_traces` with TraceFilter(session_id=...)."""
        project_gid = await self._global_id(listing.project_id)
        cursor = listing.after.cursor if listing.after else None
        query = sessions_query(project_gid, listing.limit, cursor, listing.start, listing.end)
        response = await self.transport.request(
            "POST", f"{self.root_url}/graphql", project_id=listing.project_id, body=query
        )
        answer = read_json(response)
        problem = graphql.graphql_errors(answer)
        if problem is not None:
            raise BadResponse(f"Phoenix could not list the sessions: {self.redact(problem)[:300]}")
        sessions, next_cursor, unreadable = read_sessions(answer, listing.user_id)
        return Page(sessions, NextPage(cursor=next_cursor) if next_cursor else None, unreadable)
