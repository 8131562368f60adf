"""What a TraceSource (source.py) may be asked of annotations, whichever server it reads: list a
target's, write a batch, change or delete one, look for one after a write whose outcome is
unknown, and the project's names and labels (for completion).

A source keeps none unless it says so (`offers_annotations`, from its `discover_offers`): by
default every call raises NotOffered with a sentence that says so, before anything is sent. The
spec's client implements them in annotations.py, Phoenix's in phoenix/annotations.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from tui.api.errors import NotOffered
from tui.api.offers import Offered

if TYPE_CHECKING:
    from tui.api.annotation_records import (
        Annotation,
        AnnotationChange,
        AnnotationDraft,
        AnnotationTarget,
    )

NOT_KEPT = "This {server} server keeps no annotations"


@dataclass
class Vocabulary:
    """The annotation names a project uses, each with its labels, most recent first: what the
    annotate form completes."""

    labels: dict[str, list[str]] = field(default_factory=dict)

    def add(self, name: str | None, label: str | None = None) -> None:
        if not name:
            return
        known = self.labels.setdefault(name, [])
        if label and label not in known:
            known.append(label)

    @property
    def names(self) -> list[str]:
        return list(self.labels)


class AnnotationSource:
    """The annotation calls of a TraceSource; none offered unless the source says."""

    server_name: ClassVar[str] = "tracing"
    offers_annotations = Offered("annotations")

    def annotations_not_kept(self) -> NotOffered:
        return NotOffered(NOT_KEPT.format(server=self.server_name) + ".")

    async def list_annotations(
        self,
        project_id: str,
        target: AnnotationTarget | None = None,
        name: str | None = None,
    ) -> list[Annotation]:
        """A target's annotations, newest first (a trace's: its own and its spans'); with
        `name`, of that name only. Every page."""
        raise self.annotations_not_kept()

    async def create_annotations(
        self,
        project_id: str,
        drafts: Sequence[AnnotationDraft],
        idempotency_key: str | None = None,
    ) -> list[Annotation]:
        """Write a batch (at most annotation_records.MAX_BATCH), all or none: the stored
        records in the order sent. A failure whose outcome is unknown says so
        (`ApiError.outcome_unknown`): look (`find_annotation`) before sending it again."""
        raise self.annotations_not_kept()

    async def update_annotation(
        self, project_id: str, annotation: Annotation, change: AnnotationChange
    ) -> Annotation:
        raise self.annotations_not_kept()

    async def delete_annotation(self, project_id: str, annotation: Annotation) -> None:
        raise self.annotations_not_kept()

    async def annotation_vocabulary(self, project_id: str) -> Vocabulary:
        """The names and labels the project uses (the recent ones, where a server cannot say
        all of them)."""
        raise self.annotations_not_kept()

    async def find_annotation(self, project_id: str, draft: AnnotationDraft) -> Annotation | None:
        """The stored annotation that a draft's write made, if there is one: its target's
        newest annotation of its name holding its values."""
        for annotation in await self.list_annotations(project_id, draft.target, draft.name):
            if draft.same_values(annotation):
                return annotation
        return None
