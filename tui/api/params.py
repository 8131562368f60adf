"""How values go into a request: a time as the spec's ISO 8601, an id as one path segment."""

from __future__ import annotations

from datetime import datetime, timezone
from urllib.parse import quote


def iso(moment: datetime) -> str:
    """A datetime as the spec's ISO 8601 with milliseconds and Z."""
    utc = moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def segment(value: str) -> str:
    """An id or name made safe as one segment of a URL path (no slash or dot can reach
    another route)."""
    return quote(value, safe="").replace(".", "%2E")
