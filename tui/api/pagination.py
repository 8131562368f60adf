"""Reading list envelopes and next cursors in the shapes real APIs use.

Items: a bare array, or an array under `data`, `items`, `results`, the resource's own name, or
one level further down (`{"data": {"items": [...]}}`). Cursor: a top-level field (`next_cursor`,
`nextCursor`, `cursor`, `next`, `next_page_token`...), the same nested in a `pagination`, `meta`,
`page`, `paging` or `cursors` object, a `links.next` URL, or a Link header with rel="next".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from tui.core.urls import split_url

ITEM_KEYS = ("data", "items", "results", "records", "rows", "entries", "observations")
CURSOR_KEYS = (
    "next_cursor",
    "nextCursor",
    "cursor",
    "next",
    "next_page_token",
    "nextPageToken",
    "continuation_token",
    "continuationToken",
    "after",
    "end_cursor",
    "endCursor",
)
NESTS = (
    "pagination",
    "meta",
    "page",
    "paging",
    "cursors",
    "page_info",
    "pageInfo",
    "links",
    "_links",
)
LINK_NEXT = re.compile(r'<([^>]*)>\s*;[^,]*rel="?next"?', re.IGNORECASE)


@dataclass(frozen=True)
class NextPage:
    """Where the next page is: a cursor to send back, or a URL (from links.next or Link)."""

    cursor: str | None = None
    url: str | None = None

    @property
    def identity(self) -> str:
        return self.url or self.cursor or ""


def extract_items(body: Any, resource: str) -> list[Any] | None:
    """The list of records in a response body, or None if there is none to be found."""
    if isinstance(body, list):
        return body
    if not isinstance(body, dict):
        return None
    for key in (resource, *ITEM_KEYS):
        value = body.get(key)
        if isinstance(value, list):
            return value
    for key in ("data", "result", "response"):
        inner = body.get(key)
        if isinstance(inner, dict):
            found = extract_items(inner, resource)
            if found is not None:
                return found
    return None


def _cursor_value(value: Any) -> NextPage | None:
    if isinstance(value, dict):  # {"next": {"href": ...}} (HAL) or {"cursor": ...}
        href = value.get("href") or value.get("url")
        if isinstance(href, str) and href:
            return NextPage(url=href)
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return NextPage(cursor=str(value))
    if isinstance(value, str) and value.strip():
        value = value.strip()
        if value.startswith(("http://", "https://", "/")):
            return NextPage(url=value)
        return NextPage(cursor=value)
    return None


def _explicitly_done(body: dict[str, Any]) -> bool:
    for container in (body, *(body.get(n) for n in NESTS)):
        if isinstance(container, dict):
            for key in ("has_more", "hasMore", "has_next", "hasNextPage", "has_next_page"):
                if container.get(key) is False:
                    return True
    return False


def extract_next(body: Any, headers: Mapping[str, str]) -> NextPage | None:
    """Where the next page is, or None when the server says (or shows) there is no more."""
    if isinstance(body, dict):
        if _explicitly_done(body):
            return None
        for key in CURSOR_KEYS:
            found = _cursor_value(body.get(key))
            if found:
                return found
        for nest in NESTS:
            inner = body.get(nest)
            if isinstance(inner, dict):
                for key in CURSOR_KEYS:
                    found = _cursor_value(inner.get(key))
                    if found:
                        return found
    link = headers.get("link")
    if link:
        match = LINK_NEXT.search(link)
        if match:
            return NextPage(url=match.group(1))
    return None


def cursor_from_url(url: str) -> str | None:
    """The `cursor` (or similar) query parameter of a next-page URL, if it has one."""
    parts = split_url(url)
    if parts is None:
        return None
    query = parse_qs(parts.query)
    for key in ("cursor", "page_token", "pageToken", "after", "next"):
        if query.get(key):
            return query[key][0]
    return None
