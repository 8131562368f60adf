"""What the decoders hand over: drafts of span groups, refusals, and the unreadable-body error."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tui.server.store.rows import SpanRow, TraceSums

# Resource attributes that name the project of a workspace key's spans, in this order:
# tracetui's own, then OpenInference's (what Phoenix reads).
PROJECT_ATTRIBUTES = ("tracetui.project", "openinference.project.name")


class Unreadable(ValueError):
    """The body as a whole is not an OTLP trace export (400)."""


class TooLarge(ValueError):
    """The body holds more spans or values than one export may (413): see ingest.bounds."""


@dataclass(frozen=True)
class Draft:
    """The spans of one resource, before a key decides their project."""

    project_name: str | None
    resource: str  # JSON object text of the resource's attributes
    spans: list[SpanRow]
    traces: list[TraceSums] | None = None  # the spans' traces summed (ingest.summaries)
    # Each span's attributes as decoded, for summing (the preview) where they were decoded;
    # dropped once summed (never sent between processes).
    attributes: list[dict[str, Any]] | None = None


@dataclass
class Decoded:
    drafts: list[Draft] = field(default_factory=list)
    rejected: int = 0
    first_reason: str | None = None

    def refuse(self, reason: str) -> None:
        self.rejected += 1
        if self.first_reason is None:
            self.first_reason = reason


def project_hint(resource: dict[str, Any]) -> str | None:
    for key in PROJECT_ATTRIBUTES:
        value = resource.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None
