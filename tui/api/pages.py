"""One page of a list, and the one way every source pages through a list: `read_page` asks for a
page through the transport and reads its items, `every_page` follows the pages to the end. The
list envelopes and cursors themselves are read by pagination.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from tui.api.envelopes import read_json
from tui.api.errors import BadResponse
from tui.api.pagination import NextPage, extract_items, extract_next
from tui.api.readers import read_records
from tui.core.gcpause import gc_paused

if TYPE_CHECKING:
    from tui.api.models import Record
    from tui.api.transport import Transport

MAX_PAGES = 10_000  # a hard stop for any paging loop, whatever the server says

# Records out of a page's items, and how many items were not records and were left out.
ReadItems = Callable[[list[Any]], tuple[list[Any], int]]


def records_of(model: type[Record]) -> ReadItems:
    """Items read as the tolerant `model` (the fast reader for spans and traces): an item that
    is not a JSON object is left out."""
    return partial(read_records, model)


def each_read_by(reader: Callable[[Any], Any]) -> ReadItems:
    """Items read one by one by `reader`, which gives None for one it cannot read."""

    def read_items(items: list[Any]) -> tuple[list[Any], int]:
        records = [record for record in map(reader, items) if record is not None]
        return records, len(items) - len(records)

    return read_items


@dataclass
class Page:
    """One page of a list: its records, where the next page is, and how many of the server's
    items were not records at all (not JSON objects) and were left out: the screens say so."""

    items: list[Any]
    next_page: NextPage | None
    dropped: int = 0


async def every_page(read: Callable[[NextPage | None], Awaitable[Page]]) -> AsyncIterator[Page]:
    """Every page, `read(after)` reading the one after `after` (None: the first). Stops at no
    next page, an empty page, or a next page already seen (a server going round in circles),
    and after MAX_PAGES at the most."""
    seen: set[str] = set()
    after: NextPage | None = None
    for _ in range(MAX_PAGES):
        page = await read(after)
        yield page
        after = page.next_page
        if after is None or not page.items or after.identity in seen:
            return
        seen.add(after.identity)


async def read_page(
    transport: Transport,
    url: str,
    params: dict[str, Any],
    after: NextPage | None,
    *,
    what: str,
    read_items: ReadItems,
    project_id: str | None = None,
    server_name: str = "tracing",
) -> Page:
    """The page after `after` (None: the first) of the list of `what` at `url`, its items read
    by `read_items`. An empty page when the next one cannot be followed safely."""
    target = transport.next_page_target(url, params, after)
    if target is None:
        return Page([], None)
    # No params at all for a next-page URL: httpx would replace its query with empty ones.
    response = await transport.request(
        "GET", target[0], project_id=project_id, params=target[1] or None
    )
    with gc_paused():  # a page of a big trace's spans is many small objects
        body = read_json(response)
        items = extract_items(body, what)
        if items is None:
            raise BadResponse(
                f"The {server_name} server's answer holds no list of {what} "
                f"(HTTP {response.status_code})",
                response.status_code,
            )
        records, dropped = read_items(items)
    return Page(records, extract_next(body, response.headers), dropped)
