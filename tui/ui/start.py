"""Where the app opens: a plain record, importable without Textual, so that the command line can
say what is wrong with its arguments or its server before the app's modules load."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StartAt:
    """Where the app opens: the projects, one project's traces, or one trace."""

    project_id: str | None = None
    trace_id: str | None = None
