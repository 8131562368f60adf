"""A trace's annotations and its spans', read from Phoenix for the summaries a trace carries (the
✎ marks on its spans, the line under its summary), while its spans and costs are read.

The trace's own: one REST request (`trace_annotations?trace_ids=`). Its spans': Phoenix's
GraphQL is asked first which span annotation names the project has (`spanAnnotationNames`):
none, and nothing more is asked; else one query, paged past 1,000 spans, for the trace's spans
that have one of them (Phoenix's span filter, `annotations['name']` being true for a span that
has one), each with its annotations. So a 10,000-span trace with three annotated spans costs two
small queries, not a request per 200 spans. A Phoenix whose GraphQL cannot answer that is asked
by REST instead (`span_annotations?span_ids=`, 200 ids a request, for every span read).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tui.api.annotation_records import Annotation
from tui.api.errors import ApiError
from tui.api.models import Span
from tui.api.pages import Page, every_page
from tui.api.pagination import NextPage
from tui.api.phoenix.annotation_mapping import IDS_PER_REQUEST, SPAN, TRACE, read_annotation
from tui.api.phoenix.graphql import SPANS_PER_QUERY, dig

if TYPE_CHECKING:
    from tui.api.phoenix.annotations import PhoenixAnnotationCalls

log = logging.getLogger("tracetui.api.phoenix")


SPAN_ANNOTATION_NAMES = """
query SpanAnnotationNames($project: ID!) {
  node(id: $project) { ... on Project { spanAnnotationNames } }
}
"""
ANNOTATED_SPANS = """
query AnnotatedSpans($project: ID!, $trace: ID!, $first: Int!, $after: String, $filter: String) {
  node(id: $project) {
    ... on Project {
      trace(traceId: $trace) {
        spans(first: $first, after: $after, filterCondition: $filter) {
          pageInfo { hasNextPage endCursor }
          edges { node { spanId spanAnnotations {
            id name label score explanation annotatorKind identifier source createdAt updatedAt
          } } }
        }
      }
    }
  }
}
"""


class GraphQLCannotSay(Exception):
    """Phoenix's GraphQL gave no answer to read: the REST way is taken instead."""


def annotated_filter(names: Iterable[str]) -> str:
    """Phoenix's span filter for the spans that have an annotation of one of `names` (each
    name a Python string literal: the filter is parsed as a Python expression)."""
    return " or ".join(f"annotations[{name!r}]" for name in names)


class TraceAnnotationReads:
    """The reads of one trace's annotations, started when the trace's spans are asked for."""

    def __init__(self, calls: PhoenixAnnotationCalls, project_id: str, trace_id: str) -> None:
        self.calls, self.project_id, self.trace_id = calls, project_id, trace_id
        self.span_ids: list[str] = []  # for the REST way, should GraphQL not answer
        self.own = asyncio.ensure_future(calls._listed(project_id, TRACE, [trace_id], None))
        self.on_spans = asyncio.ensure_future(self._by_graphql())

    def add_spans(self, spans: Sequence[Span]) -> None:
        self.span_ids += [span.id for span in spans if span.id]

    def cancel(self) -> None:
        for read in (self.own, self.on_spans):
            if not read.done():
                read.cancel()
            elif not read.cancelled():
                read.exception()  # a failure no one waits for any more: taken, not warned of

    async def annotations(self) -> list[Annotation] | None:
        """Every one read; None when Phoenix could not say (the trace is then shown without
        them, never failed)."""
        try:
            own = await self.own
            theirs = await self.on_spans
            if theirs is None:
                theirs = await self._by_rest()
        except ApiError as error:
            log.warning("Phoenix's annotations of a trace could not be read: %s", error.message)
            self.cancel()
            return None
        for annotation in theirs:
            annotation.trace_id = self.trace_id
        return own + theirs

    async def _by_rest(self) -> list[Annotation]:
        ids = self.span_ids
        chunks = [ids[i : i + IDS_PER_REQUEST] for i in range(0, len(ids), IDS_PER_REQUEST)]
        answers = await asyncio.gather(
            *(self.calls._listed(self.project_id, SPAN, chunk, None) for chunk in chunks)
        )
        return [annotation for answer in answers for annotation in answer]

    async def _by_graphql(self) -> list[Annotation] | None:
        """The annotations of the trace's annotated spans; None when GraphQL cannot say."""
        calls, project_id = self.calls, self.project_id
        try:
            project = await calls._global_id(project_id)
            answer = await calls._graphql_call(
                SPAN_ANNOTATION_NAMES, {"project": project}, project_id
            )
        except ApiError:
            return None
        names = dig(answer, "data", "node", "spanAnnotationNames")
        if not isinstance(names, list):
            return None
        names = [name for name in names if isinstance(name, str)]
        if not names:
            return []
        condition = annotated_filter(names)

        async def page(after: NextPage | None) -> Page:
            variables = {
                "project": project,
                "trace": self.trace_id,
                "first": SPANS_PER_QUERY,
                "after": after.cursor if after else None,
                "filter": condition,
            }
            answer = await calls._graphql_call(ANNOTATED_SPANS, variables, project_id)
            spans = dig(answer, "data", "node", "trace", "spans")
            if not isinstance(spans, Mapping):
                raise GraphQLCannotSay
            cursor = dig(spans, "pageInfo", "endCursor")
            more = dig(spans, "pageInfo", "hasNextPage") is True and isinstance(cursor, str)
            return Page(self._read_page(spans), NextPage(cursor=cursor) if more else None)

        found: list[Annotation] = []
        try:
            async for each in every_page(page):
                found += each.items
        except (ApiError, GraphQLCannotSay):
            return None
        return found

    def _read_page(self, spans: Mapping[str, Any]) -> list[Annotation]:
        found: list[Annotation] = []
        edges = spans.get("edges")
        for edge in edges if isinstance(edges, list) else ():
            span_id = dig(edge, "node", "spanId")
            records = dig(edge, "node", "spanAnnotations")
            if not isinstance(span_id, str) or not isinstance(records, list):
                continue
            for record in records:
                annotation = read_annotation(record, self.project_id)
                if annotation is not None:
                    annotation.span_id = span_id
                    found.append(annotation)
        return found
