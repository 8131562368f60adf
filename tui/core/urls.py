"""URL parsing that never raises, and whether a host is this machine.

Servers (Location and Link headers, next-page links, webhook URLs) and users send malformed URLs,
and `urllib.parse` raises ValueError on some of them (`http://[oops` is an "Invalid IPv6 URL").
"""

from __future__ import annotations

import ipaddress
from urllib.parse import SplitResult, urljoin, urlsplit


def split_url(url: str) -> SplitResult | None:
    """`urlsplit(url)`, or None when the URL cannot be read."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises for a port out of range
    except ValueError:
        return None
    return parts


def join_url(base: str, url: str) -> str | None:
    """`urljoin(base, url)`, or None when the URL cannot be read."""
    try:
        return urljoin(base, url)
    except ValueError:
        return None


def host_of(url: str) -> str | None:
    """The host name of `url`, or None if it has none or cannot be read."""
    parts = split_url(url)
    return parts.hostname if parts is not None else None


def is_loopback(host: str) -> bool:
    """Whether a host name means this machine: `localhost` or a loopback address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
