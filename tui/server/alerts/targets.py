"""Where a webhook may go: the SSRF guard.

A webhook URL is the user's, but the request comes from the service, inside its network: left
alone, `http://169.254.169.254/latest/meta-data/` would have the service fetch cloud
credentials, and `http://localhost:6379/` poke at its neighbours. So the host is resolved first
and every address it resolves to must be a public (globally routable) one: loopback, private
(10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16 with the cloud metadata
address, fe80::/10), carrier-grade NAT, multicast, reserved and unspecified addresses are
refused, IPv4 written inside IPv6 (::ffff:a.b.c.d) included. The request then goes to the
address that was checked, not to the name again (a second lookup could answer otherwise: DNS
rebinding), with the name kept in the Host header and in TLS (SNI, certificate check).
Redirects are never followed. `--allow-private-webhooks` lifts the address rule for local use,
except for the cloud metadata addresses, which no webhook ever needs: always refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import threading
from collections.abc import Awaitable, Callable
from typing import NamedTuple
from urllib.parse import urlsplit, urlunsplit

# (host, port) -> the addresses it resolves to, as text.
Resolver = Callable[[str, int], Awaitable[list[str]]]
RESOLVE_TIMEOUT_S = 5.0
HINT = "start the service with --allow-private-webhooks to allow it"
# Cloud instance metadata (AWS, GCP, Azure, OpenStack; AWS ECS tasks; Alibaba; AWS over IPv6).
METADATA = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254")
)


RESERVED_NAMES = frozenset(
    ["example", "example.com", "example.net", "example.org", "invalid", "test"]
)
RESERVED_SUFFIXES = tuple(f".{name}" for name in RESERVED_NAMES)


class Refused(Exception):
    """The target may not be sent to; the message says why (never the URL's path or query)."""


class Target(NamedTuple):
    """Where one attempt goes: the URL with the checked address in place of the host, the Host
    header to send, and the name TLS checks the certificate against (https only)."""

    url: str
    host_header: str
    sni_hostname: str | None


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the system's resolver gives for `host` (TCP ones), without blocking. The
    look-up runs in a daemon thread of its own, not the loop's executor: a resolver that hangs
    must not hold up the service's exit (the loop's shutdown joins its executor's threads)."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[list[str]] = loop.create_future()

    def settle(result: list[str] | None, error: BaseException | None) -> None:
        if answer.done():
            return
        if error is not None:
            answer.set_exception(error)
        else:
            answer.set_result(result or [])

    def look_up() -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            result, error = [str(info[4][0]) for info in infos], None
        except OSError as exc:  # socket.gaierror included
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=look_up, name="tracetui-resolve", daemon=True).start()
    return await answer


def address_kind(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """What makes `address` off limits ("loopback", "link-local"...), or None if public."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is not None:
            return address_kind(embedded)
    checks = (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
    )
    for name, hit in checks:
        if hit:
            return name
    return None if address.is_global else "non-public"


async def resolve_target(
    url: str, resolve: Resolver, allow_private: bool, timeout_s: float = RESOLVE_TIMEOUT_S
) -> Target:
    """The Target of `url` once its host is resolved and checked; Refused if it may not be
    sent to. A name that does not resolve raises OSError (worth retrying: DNS recovers)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:  # a bracketed host that does not close, say
        raise Refused("the webhook URL cannot be read") from exc
    if parts.scheme not in ("http", "https") or not host:
        raise Refused("the webhook URL is not an http:// or https:// URL with a host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise Refused("the webhook URL's port is not a number from 0 to 65535") from exc
    try:
        literal: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    name = host.rstrip(".").lower()
    if literal is None and (name in RESERVED_NAMES or name.endswith(RESERVED_SUFFIXES)):
        # Names kept for examples and tests (RFC 2606, 6761) never resolve: refused without
        # a DNS query, so the demo's example hooks (`serve --demo`) send nothing anywhere.
        raise Refused(f"refused: {host} is a reserved example name, which never resolves")
    if literal is not None:
        addresses = [literal]
    else:
        try:
            found = await asyncio.wait_for(resolve(host, port), timeout_s)
        except asyncio.TimeoutError as exc:
            raise OSError(f"resolving {host} timed out") from exc
        addresses = [ipaddress.ip_address(a.split("%")[0]) for a in found]
        if not addresses:
            raise OSError(f"{host} resolves to no address")
    # Every address must pass, not just one: a name may resolve to a public address and a
    # private one, and the connection could land on either.
    where = "" if literal is not None else f"{host} resolves to "
    for address in addresses:
        embedded = getattr(address, "ipv4_mapped", None) or address
        if embedded in METADATA or address in METADATA:
            raise Refused(f"refused: {where}{address}, a cloud metadata address")
        kind = None if allow_private else address_kind(address)
        if kind is not None:
            raise Refused(f"refused: {where}{address}, a {kind} address ({HINT})")
    chosen = addresses[0]
    netloc = f"[{chosen}]" if chosen.version == 6 else str(chosen)
    default_port = 443 if parts.scheme == "https" else 80
    if port != default_port:
        netloc += f":{port}"
    host_header = host if ":" not in host else f"[{host}]"
    if parts.port is not None and port != default_port:
        host_header += f":{port}"
    pinned = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    return Target(pinned, host_header, host if parts.scheme == "https" else None)
