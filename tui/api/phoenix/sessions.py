"""A project's sessions from Phoenix, read through its GraphQL (`Project.sessions`).

Phoenix's REST list (`GET /v1/projects/{id}/sessions`) gives each session's id, times, traces and
tokens, in the order the sessions were created, with no time window. Its GraphQL gives what the
app's sessions screen shows, in the order it shows them, one query a page: the sessions in a
time window, newest `endTime` first (the contract's last_seen), paged by Phoenix's cursor, each
with its user (the first `user.id` of its traces), its count of traces and of traces with an
error, its tokens and the cost Phoenix computes. Phoenix's session filter expressions know no
user, so a user's sessions are picked out of each page (a page may then hold fewer rows).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tui.api.models import Session
from tui.api.params import iso
from tui.api.phoenix.graphql import dig

MAX_FIRST = 1000

SESSIONS = """
query Sessions($project: ID!, $first: Int!, $after: String, $range: TimeRange) {
  node(id: $project) {
    ... on Project {
      sessions(first: $first, after: $after, timeRange: $range,
               sort: {col: endTime, dir: desc}) {
        pageInfo { hasNextPage endCursor }
        edges { node {
          id sessionId startTime endTime numTraces numTracesWithError userId
          tokenUsage { total }
          costSummary { total { cost } }
        } }
      }
    }
  }
}
"""


def sessions_query(
    project_gid: str,
    limit: int | None,
    after: str | None,
    start: datetime | None,
    end: datetime | None,
) -> dict[str, Any]:
    window: dict[str, str] | None = None
    if start is not None or end is not None:
        window = {}
        if start is not None:
            window["start"] = iso(start)
        if end is not None:
            window["end"] = iso(end)
    return {
        "query": SESSIONS,
        "variables": {
            "project": project_gid,
            "first": max(1, min(limit or 100, MAX_FIRST)),
            "after": after,
            "range": window,
        },
    }


def read_sessions(answer: Any, user_id: str | None) -> tuple[list[Session], str | None, int]:
    """(the sessions of a Sessions answer, the cursor of the next page or None, how many rows
    could not be read)."""
    connection = dig(answer, "data", "node", "sessions")
    edges = connection.get("edges") if isinstance(connection, Mapping) else None
    sessions: list[Session] = []
    unreadable = 0
    for edge in edges if isinstance(edges, list) else ():
        node = dig(edge, "node")
        if not isinstance(node, Mapping) or not node.get("sessionId"):
            unreadable += 1
            continue
        if user_id is not None and node.get("userId") != user_id:
            continue
        sessions.append(
            Session.model_validate(
                {
                    "id": node.get("sessionId"),
                    "user_id": node.get("userId"),
                    "first_seen": node.get("startTime"),
                    "last_seen": node.get("endTime"),
                    "trace_count": node.get("numTraces"),
                    "total_tokens": dig(node, "tokenUsage", "total"),
                    "total_cost_usd": dig(node, "costSummary", "total", "cost"),
                    "error_count": node.get("numTracesWithError"),
                    "phoenix_id": node.get("id"),
                }
            )
        )
    after = None
    if dig(connection, "pageInfo", "hasNextPage") is True:
        cursor = dig(connection, "pageInfo", "endCursor")
        after = cursor if isinstance(cursor, str) and cursor else None
    return sessions, after, unreadable
