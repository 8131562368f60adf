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
