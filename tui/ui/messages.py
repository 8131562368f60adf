"""Messages that screens send up to the app (attributes go down, messages go up)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from tui.api import Project


class ProjectsLoaded(Message):
    """The workspace's projects as last listed: the palette offers to switch to them."""

    def __init__(self, projects: list[Project]) -> None:
        super().__init__()
        self.projects = projects


class DiffMark(Message):
    """Mark a trace as A of a diff (the trace list's `m`): the next diff asked for compares
    against it."""

    def __init__(self, trace_id: str, project_id: str, label: str) -> None:
        super().__init__()
        self.trace_id = trace_id
        self.project_id = project_id
        self.label = label  # how the trace is named to the user (its name, its start)


class DiffRequested(Message):
    """Diff a trace (B) against the marked one, or against its last good one when none is
    marked in its project (the trace list's `D`)."""

    def __init__(self, trace_id: str, project_id: str) -> None:
        super().__init__()
        self.trace_id = trace_id
        self.project_id = project_id
