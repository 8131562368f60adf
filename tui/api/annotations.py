"""The annotation calls of the spec's client (an extension a server may offer: docs/api.md):

- `POST /v1/projects/{id}/annotations` `{"data": [...]}`: a batch of at most 1,000, all or
  none, under an Idempotency-Key;
- `GET /v1/projects/{id}/annotations?trace_id=&span_id=&session_id=&name=` newest first,
  keyset-paged;
- `PATCH` and `DELETE /v1/projects/{id}/annotations/{aid}`.

Each call first learns whether the server offers them (offers.annotations, from its OpenAPI
document, once per source); for a server that does not, it raises NotOffered with a sentence
that says so, before anything is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui.api.annotation_records import (
    MAX_BATCH,
    Annotation,
    AnnotationChange,
    AnnotationDraft,
    AnnotationTarget,
)
from tui.api.annotation_source import Vocabulary
from tui.api.envelopes import read_json, read_record
from tui.api.errors import BadResponse
from tui.api.manage import ManageCalls
from tui.api.pages import records_of
from tui.api.pagination import extract_items
from tui.api.params import segment

PAGE = 500  # the most the service lists in one page
VOCABULARY_READ = 500  # the newest annotations whose names and labels complete the form


class AnnotationCalls(ManageCalls):
    """The annotation calls, on top of the management calls (manage.py)."""

    async def _require_annotations(self) -> None:
        if not (await self.discover_offers()).annotations:
            raise self.annotations_not_kept()

    @staticmethod
    def _annotations_url(project_id: str) -> str:
        return f"projects/{segment(project_id)}/annotations"

    async def list_annotations(
        self,
        project_id: str,
        target: AnnotationTarget | None = None,
        name: str | None = None,
    ) -> list[Annotation]:
        await self._require_annotations()
        params: dict[str, Any] = {**(target.fields() if target else {}), "limit": PAGE}
        if name is not None:
            params["name"] = name
        url = self._annotations_url(project_id)
        return await self._all(Annotation, "annotations", url, project_id, params)

    async def create_annotations(
        self,
        project_id: str,
        drafts: Sequence[AnnotationDraft],
        idempotency_key: str | None = None,
    ) -> list[Annotation]:
        if not 1 <= len(drafts) <= MAX_BATCH:
            raise ValueError(f"a batch holds 1 to {MAX_BATCH} annotations, not {len(drafts)}")
        await self._require_annotations()
        response = await self._write(
            "POST",
            self._annotations_url(project_id),
            {"data": [draft.body() for draft in drafts]},
            project_id=project_id,
            idempotency_key=idempotency_key,
        )
        items = extract_items(_json_or_unknown(response), "annotations")
        records, _ = records_of(Annotation)(items or [])
        if len(records) != len(drafts):
            # Stored (a 2xx), but the answer does not say what: whoever sends it again looks.
            raise BadResponse(
                f"The server took the annotations but its answer does not list them "
                f"(HTTP {response.status_code})",
                response.status_code,
                outcome_unknown=True,
            )
        return list(records)

    async def update_annotation(
        self, project_id: str, annotation: Annotation, change: AnnotationChange
    ) -> Annotation:
        await self._require_annotations()
        url = f"{self._annotations_url(project_id)}/{segment(annotation.id or '')}"
        response = await self._write("PATCH", url, change.changes, project_id=project_id)
        return Annotation.model_validate(read_record(response))

    async def delete_annotation(self, project_id: str, annotation: Annotation) -> None:
        await self._require_annotations()
        url = f"{self._annotations_url(project_id)}/{segment(annotation.id or '')}"
        await self._write("DELETE", url, project_id=project_id)

    async def annotation_vocabulary(self, project_id: str) -> Vocabulary:
        """The names and labels of the project's newest VOCABULARY_READ annotations."""
        await self._require_annotations()
        page = await self._page(
            records_of(Annotation),
            "annotations",
            self._annotations_url(project_id),
            {"limit": VOCABULARY_READ},
            project_id,
        )
        vocabulary = Vocabulary()
        for annotation in page.items:
            vocabulary.add(annotation.name, annotation.label)
        return vocabulary


def _json_or_unknown(response: Any) -> Any:
    """A write's answer as JSON; one that is not leaves its outcome unknown."""
    try:
        return read_json(response)
    except BadResponse as error:
        raise BadResponse(error.message, error.status, outcome_unknown=True) from None
