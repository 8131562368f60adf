"""Phoenix's span, trace and session annotations and notes as the app's annotations
(tui/api/annotation_source.py), checked against Phoenix 20.26.1's routers:

- read: `GET /v1/projects/{p}/span_annotations?span_ids=...`, `trace_annotations?trace_ids=...`,
  `session_annotations?session_ids=...` (`include_annotation_names` for a name; cursor-paged,
  newest row first). A trace's list is its own and its spans' (its spans' ids first, from
  `/spans`). Phoenix answers its record (`result: {label, score, explanation}`, `identifier`,
  `annotator_kind`, `source`, `user_id`): read as the app's Annotation, whose target is made
  from the ids asked for (a span's record names no trace).
- write: `POST /v1/span_annotations?sync=true` (`trace_annotations`, `session_annotations`), one
  request per kind of target, and a note (the name "note", which those refuse) with
  `POST /v1/span_notes` (`trace_notes`, `session_notes`), one request per note. Phoenix answers
  only ids: the stored records are read back. Phoenix's rule for an identifier is the
  contract's, with one difference said in docs/phoenix.md: without one, a second annotation of
  the same name on the same target replaces the first (Phoenix keys them by name, target and
  identifier, the empty one included); notes without one each add a note.
- change and delete one: Phoenix's REST deletes only by filter (a name, an identifier, a time
  window), which can reach other annotations; its GraphQL changes and deletes by id, as its own
  screens do (`patchSpanAnnotations`, `deleteSpanAnnotations`, `deleteSpanNotes`...). A note
  cannot be changed (Phoenix refuses): said plainly, before anything is sent.

What Phoenix cannot keep (a label or score on a note, a note without text) is refused on its
field before anything is sent, never dropped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from tui.api.annotation_records import (
    MAX_BATCH,
    NOTE,
    Annotation,
    AnnotationChange,
    AnnotationDraft,
    AnnotationTarget,
)
from tui.api.annotation_source import Vocabulary
from tui.api.envelopes import read_json
from tui.api.errors import ApiError, BadResponse, FieldError, NotFound, NotOffered, ValidationFailed
from tui.api.pages import Page, each_read_by, every_page
from tui.api.pagination import NextPage, extract_items
from tui.api.params import segment
from tui.api.phoenix.annotation_mapping import (
    IDS_PER_REQUEST,
    SESSION,
    SPAN,
    TRACE,
    Kind,
    kind_of,
    newest_first,
    phoenix_problems,
    read_annotation,
    target_id,
)
from tui.api.phoenix.graphql import dig, graphql_errors
from tui.api.source import TraceSource

log = logging.getLogger("tracetui.api.phoenix")

LIST_PAGE = 1000  # Phoenix takes up to 10,000
NOTE_IDENTIFIER_PREFIX = "tracetui-note-"


UPDATE_SESSION_ANNOTATION = """
mutation UpdateSessionAnnotation($input: UpdateAnnotationInput!) {
  updateProjectSessionAnnotations(input: $input) { __typename }
}
"""
ANNOTATION_NAMES = """
query SpanAnnotationNames($project: ID!) {
  node(id: $project) { ... on Project { spanAnnotationNames } }
}
"""
ANNOTATION_NAMES = """
query AnnotationNames($project: ID!) {
  node(id: $project) {
    ... on Project { spanAnnotationNames traceAnnotationNames sessionAnnotationNames }
  }
}
"""


class PhoenixAnnotationCalls(TraceSource):
    """The annotation calls of the Phoenix reader (client.py extends this)."""

    async def _global_id(self, project_id: str) -> str:
        raise NotImplementedError  # client.py: the project's GlobalID

    @property
    def _graphql_url(self) -> str:
        return self.base_url.removesuffix("/v1") + "/graphql"

    # -- reading ---------------------------------------------------------------------------------

    async def list_annotations(
        self,
        project_id: str,
        target: AnnotationTarget | None = None,
        name: str | None = None,
    ) -> list[Annotation]:
        if target is None or target.kind == "nothing":
            raise NotOffered(
                "Phoenix lists the annotations of a trace, a span or a session, "
                "not all of a project's at once."
            )
        names = [name] if name is not None else None
        if target.kind == "trace":
            assert target.trace_id is not None
            own, spans = await asyncio.gather(
                self._listed(project_id, TRACE, [target.trace_id], names),
                self.list_spans(target.trace_id, project_id),
            )
            span_ids = [span.id for span in spans if span.id]
            theirs = await self._listed(project_id, SPAN, span_ids, names) if span_ids else []
            records = own + theirs
        else:
            records = await self._listed(project_id, kind_of(target), [target_id(target)], names)
        for record in records:
            if record.span_id is not None:  # Phoenix's span record names no trace
                record.trace_id = target.trace_id
        return newest_first(records)

    async def _listed(
        self, project_id: str, kind: Kind, ids: Sequence[str], names: list[str] | None
    ) -> list[Annotation]:
        """Every annotation of `kind` on `ids` (of `names`), IDS_PER_REQUEST ids a request."""
        url = f"projects/{segment(project_id)}/{kind.annotations}"
        read = each_read_by(lambda item: read_annotation(item, project_id))
        records: list[Annotation] = []
        for start in range(0, len(ids), IDS_PER_REQUEST):
            params: dict[str, Any] = {
                f"{kind.id_field}s": list(ids[start : start + IDS_PER_REQUEST]),
                "limit": LIST_PAGE,
            }
            if names:
                params["include_annotation_names"] = names

            async def page(after: NextPage | None, params: dict[str, Any] = params) -> Page:
                return await self._page(read, "annotations", url, params, project_id, after)

            async for listed in every_page(page):
                records += listed.items
        return records

    async def annotation_vocabulary(self, project_id: str) -> Vocabulary:
        """The names the project's spans, traces and sessions use (Phoenix lists names, not
        labels, in one query)."""
        answer = await self._graphql_call(
            ANNOTATION_NAMES, {"project": await self._global_id(project_id)}, project_id
        )
        vocabulary = Vocabulary()
        project = dig(answer, "data", "node")
        for field in ("spanAnnotationNames", "traceAnnotationNames", "sessionAnnotationNames"):
            names = dig(project, field)
            for name in names if isinstance(names, list) else ():
                if isinstance(name, str):
                    vocabulary.add(name)
        return vocabulary

    # -- writing ---------------------------------------------------------------------------------

    async def create_annotations(
        self,
        project_id: str,
        drafts: Sequence[AnnotationDraft],
        idempotency_key: str | None = None,
    ) -> list[Annotation]:
        """One POST per kind of target, one per note; then the stored records, read back. A
        note without an identifier is sent with one made of `idempotency_key` and its place,
        so that sending the batch again under the same key changes nothing."""
        if not 1 <= len(drafts) <= MAX_BATCH:
            raise ValueError(f"a batch holds 1 to {MAX_BATCH} annotations, not {len(drafts)}")
        problems = phoenix_problems(drafts)
        if problems:
            raise ValidationFailed("Phoenix cannot keep this as written.", None, problems)
        ids: dict[int, str] = {}
        try:
            for kind in (SPAN, TRACE, SESSION):
                batch = [
                    (i, d)
                    for i, d in enumerate(drafts)
                    if not d.is_note and kind_of(d.target) is kind
                ]
                if batch:
                    ids.update(await self._post_annotations(project_id, kind, batch))
            for index, draft in enumerate(drafts):
                if draft.is_note:
                    ids[index] = await self._post_note(project_id, draft, index, idempotency_key)
        except ApiError as error:
            if ids:  # some are stored: sending again under the same key updates, never adds
                raise ApiError(
                    f"{error.message} ({len(ids)} of {len(drafts)} were stored; saving again "
                    "stores the rest)",
                    error.status,
                ) from error
            raise
        return await self._read_back(project_id, drafts, ids)

    async def _post_annotations(
        self, project_id: str, kind: Kind, batch: list[tuple[int, AnnotationDraft]]
    ) -> dict[int, str]:
        body = {"data": [self._phoenix_body(draft) for _, draft in batch]}
        response = await self.transport.request(
            "POST", kind.annotations, project_id=project_id, params={"sync": "true"}, body=body
        )
        items = extract_items(_json_or_unknown(response), "data") or []
        got = [item.get("id") for item in items if isinstance(item, Mapping)]
        if len(got) != len(batch) or not all(isinstance(i, str) for i in got):
            raise BadResponse(
                f"Phoenix took the {kind.name} annotations but its answer does not list them "
                f"(HTTP {response.status_code})",
                response.status_code,
                outcome_unknown=True,
            )
        return {index: str(got_id) for (index, _), got_id in zip(batch, got, strict=True)}

    @staticmethod
    def _phoenix_body(draft: AnnotationDraft) -> dict[str, Any]:
        kind = kind_of(draft.target)
        body: dict[str, Any] = {
            kind.id_field: target_id(draft.target),
            "name": draft.name,
            "annotator_kind": draft.annotator_kind,
            "result": {
                "label": draft.label,
                "score": draft.score,
                "explanation": draft.explanation,
            },
            "metadata": draft.metadata or {},
        }
        if draft.identifier:
            body["identifier"] = draft.identifier
        return body

    async def _post_note(
        self, project_id: str, draft: AnnotationDraft, index: int, key: str | None
    ) -> str:
        kind = kind_of(draft.target)
        identifier = draft.identifier or (f"{NOTE_IDENTIFIER_PREFIX}{key}-{index}" if key else "")
        body = {
            "data": {
                kind.id_field: target_id(draft.target),
                "note": draft.explanation,
                "identifier": identifier,
            }
        }
        response = await self.transport.request(
            "POST", kind.notes, project_id=project_id, body=body
        )
        got = dig(_json_or_unknown(response), "data", "id")
        if not isinstance(got, str):
            raise BadResponse(
                f"Phoenix took the note but its answer does not say which it is "
                f"(HTTP {response.status_code})",
                response.status_code,
                outcome_unknown=True,
            )
        return got

    async def _read_back(
        self, project_id: str, drafts: Sequence[AnnotationDraft], ids: dict[int, str]
    ) -> list[Annotation]:
        """The stored records, in the order sent (Phoenix answers ids only). One missing from
        the lists (deleted at once by someone else) is made from its draft."""
        found: dict[str, Annotation] = {}
        for kind in (SPAN, TRACE, SESSION):
            mine = [d for d in drafts if kind_of(d.target) is kind]
            if mine:
                targets = list(dict.fromkeys(target_id(d.target) for d in mine))
                names = sorted({d.name for d in mine})
                for listed in await self._listed(project_id, kind, targets, names):
                    if listed.id:
                        found[listed.id] = listed
        records = []
        for index, draft in enumerate(drafts):
            stored = found.get(ids[index])
            if stored is None:
                stored = Annotation.model_validate(
                    {**draft.body(), "id": ids[index], "project_id": project_id}
                )
            stored.trace_id = draft.target.trace_id
            records.append(stored)
        return records

    # -- changing and deleting: Phoenix's GraphQL, by id -----------------------------------------

    async def update_annotation(
        self, project_id: str, annotation: Annotation, change: AnnotationChange
    ) -> Annotation:
        if annotation.is_note:
            raise NotOffered(
                "Phoenix cannot change a note: it keeps notes as written. Delete it and write "
                "a new one."
            )
        changes = dict(change.changes)
        if changes.get("name") == NOTE:
            raise ValidationFailed(
                "Phoenix keeps the name “note” for notes.",
                None,
                (FieldError("name", "On Phoenix, “note” names notes only."),),
            )
        kind = kind_of(annotation.target)
        if kind is SESSION:
            merged = {
                "name": annotation.name,
                "label": annotation.label,
                "score": annotation.score,
                "explanation": annotation.explanation,
                "metadata": annotation.metadata or {},
                **changes,
            }
            source = annotation.extras.get("source")
            values = {
                "id": annotation.id,
                "annotatorKind": annotation.annotator_kind or "HUMAN",
                "source": source if source in ("API", "APP") else "API",
                **merged,
            }
            await self._graphql_call(UPDATE_SESSION_ANNOTATION, {"input": values}, project_id)
        else:
            patch = {"annotationId": annotation.id, **changes}
            query = (
                f"mutation Patch($input: [PatchAnnotationInput!]!) "
                f"{{ {kind.patch}(input: $input) {{ __typename }} }}"
            )
            await self._graphql_call(query, {"input": [patch]}, project_id)
        name = changes.get("name", annotation.name) or ""
        listed = await self._listed(project_id, kind, [target_id(annotation.target)], [name])
        for record in listed:
            if record.id == annotation.id:
                record.trace_id = annotation.trace_id
                return record
        raise NotFound("Phoenix changed the annotation, but it is gone now (deleted).", 404)

    async def delete_annotation(self, project_id: str, annotation: Annotation) -> None:
        kind = kind_of(annotation.target)
        if kind is SESSION and not annotation.is_note:
            query = f"mutation Delete($id: ID!) {{ {kind.delete}(id: $id) {{ __typename }} }}"
            await self._graphql_call(query, {"id": annotation.id}, project_id)
            return
        mutation = kind.delete_notes if annotation.is_note else kind.delete
        query = (
            f"mutation Delete($input: DeleteAnnotationsInput!) "
            f"{{ {mutation}(input: $input) {{ __typename }} }}"
        )
        await self._graphql_call(query, {"input": {"annotationIds": [annotation.id]}}, project_id)

    async def _graphql_call(self, query: str, variables: dict[str, Any], project_id: str) -> Any:
        """A GraphQL answer; Phoenix's refusal (an error with HTTP 200) raised in its words."""
        response = await self.transport.request(
            "POST",
            self._graphql_url,
            project_id=project_id,
            body={"query": query, "variables": variables},
        )
        answer = read_json(response)
        problem = graphql_errors(answer)
        if problem is not None:
            message = f"Phoenix refused: {self.redact(problem)[:300]}"
            if problem.startswith("Could not find"):
                raise NotFound(message, 404)
            raise ApiError(message, response.status_code)
        return answer


def _json_or_unknown(response: Any) -> Any:
    """A write's answer as JSON; one that is not leaves its outcome unknown."""
    try:
        return read_json(response)
    except BadResponse as error:
        raise BadResponse(error.message, error.status, outcome_unknown=True) from None
