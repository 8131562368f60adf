"""One annotation written on many targets (every trace a query matches): one POST per 1,000, each
under its own Idempotency-Key, never sent twice.

A BatchedWrite remembers how far it got. Its batches share one `identifier` (a second write
with the same target, name and identifier updates the first instead of adding one), so whether
a batch whose outcome is unknown was stored can be looked up exactly, on its first target,
before it is sent again; and a resend that a server carries out anyway changes nothing. A batch
that failed is sent again, by the next `run`, under the same key; the values changed since then
are a new write for the batches left, under new keys.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tui.api.annotation_records import MAX_BATCH, AnnotationDraft, AnnotationTarget
from tui.api.errors import ApiError

if TYPE_CHECKING:
    from tui.api.source import TraceSource

IDENTIFIER_PREFIX = "tracetui-bulk-"


@dataclass(frozen=True)
class Values:
    """What every target gets: a name and at least one of label, score and explanation."""

    name: str
    label: str | None = None
    score: float | None = None
    explanation: str | None = None


@dataclass
class BatchedWrite:
    """The write of `values` on each of `targets` of `project_id`, batch after batch."""

    project_id: str
    targets: Sequence[AnnotationTarget]
    identifier: str = field(default_factory=lambda: IDENTIFIER_PREFIX + uuid.uuid4().hex[:12])
    stored: int = 0  # batches stored, from the first
    unknown: bool = False  # the next batch was sent, and whether it was stored is not known
    _keys: dict[int, str] = field(default_factory=dict)
    _values: Values | None = None  # what the keys were made for

    @property
    def batches(self) -> int:
        return -(-len(self.targets) // MAX_BATCH)

    @property
    def done(self) -> bool:
        return self.stored >= self.batches

    @property
    def targets_stored(self) -> int:
        return min(len(self.targets), self.stored * MAX_BATCH)

    def drafts(self, index: int, values: Values) -> list[AnnotationDraft]:
        chunk = self.targets[index * MAX_BATCH : (index + 1) * MAX_BATCH]
        return [
            AnnotationDraft(
                target,
                values.name,
                values.label,
                values.score,
                values.explanation,
                identifier=self.identifier,
            )
            for target in chunk
        ]

    async def run(
        self,
        client: TraceSource,
        values: Values,
        progress: Callable[[BatchedWrite], object] | None = None,
    ) -> None:
        """Store the batches left; the first failure stops it (raised), and the next `run`
        goes on from there."""
        if values != self._values:
            if self.unknown:  # sent with the old values: looked for as they were
                await self._settle(client)
            self._keys = {i: k for i, k in self._keys.items() if i < self.stored}
            self._values = values
        for index in range(self.stored, self.batches):
            drafts = self.drafts(index, values)
            if self.unknown:
                self.unknown = False
                if await self._was_stored(client, drafts[0]):
                    self._stored_one(progress)
                    continue
            key = self._keys.setdefault(index, uuid.uuid4().hex)
            try:
                await client.create_annotations(self.project_id, drafts, idempotency_key=key)
            except ApiError as error:
                self.unknown = error.outcome_unknown
                raise
            self._stored_one(progress)

    def _stored_one(self, progress: Callable[[BatchedWrite], object] | None) -> None:
        self.stored += 1
        if progress is not None:
            progress(self)

    async def _settle(self, client: TraceSource) -> None:
        """Whether the batch of unknown outcome was stored, with the values it was sent with."""
        assert self._values is not None
        self.unknown = False
        if await self._was_stored(client, self.drafts(self.stored, self._values)[0]):
            self.stored += 1

    async def _was_stored(self, client: TraceSource, first: AnnotationDraft) -> bool:
        """A batch is stored whole or not at all: its first target tells."""
        listed = await client.list_annotations(self.project_id, first.target, first.name)
        return any(annotation.identifier == self.identifier for annotation in listed)
