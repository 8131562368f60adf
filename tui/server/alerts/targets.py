"""Where a webhook may go: the SSRF guard.

A webhook URL is the user's, but the request comes from the service, inside its network: left
alone, `http://169.254.169.254/latest/meta-data/` would have the service fetch cloud
credentials, and `http://localhost:6379/` poke at its neighbours. So the host is resolved first
and every address it resolves to must be a public (globally routable) one: loopback, private
(10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16 with the cloud metadata
address, fe80::/10), carrier-grade NAT, multicast, reserved and unspecified addresses are
refused, and so is an IPv4 address written inside IPv6 in any of its forms (mapped
::ffff:a.b.c.d, translated ::ffff:0:a.b.c.d, compatible ::a.b.c.d, 6to4 2002::/16, Teredo
2001::/32, NAT64 64:ff9b::/96 and 64:ff9b:1::/48): each reaches the IPv4 address it carries, so
it is judged as that address. The request then goes to the address that was checked, not to the name again (a second lookup could answer otherwise: DNS
rebinding), with the name kept in the Host header and in TLS (SNI, certificate check).
Redirects are never followed. `--allow-private-webhooks` lifts the address rule for local use,
except for the cloud metadata addresses, which no webhook ever needs: always refused.

The same rule runs twice. When an alert is created (`check_new_target`), so that a target
every delivery would refuse is answered 422 at once rather than accepted and failed later:
a literal address is judged as it is, a name by what it resolves to then. And before every
attempt (`resolve_target`), since a name may resolve elsewhere by then (DNS rebinding). At
creation a name that does not resolve yet, or whose look-up times out, passes (delivery
retries those), and so does a reserved example name: it never resolves, so nothing is ever
sent, and docs, demos and tests use them as placeholders.
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


Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# Translation prefixes whose last 32 bits are an IPv4 address (RFC 6052, RFC 8215); `ipaddress`
# knows the mapped, 6to4 and Teredo forms but not these.
NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # ::a.b.c.d (deprecated, still routed by some)
IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")  # SIIT, RFC 2765: ::ffff:0:a.b.c.d


def embedded_ipv4(address: Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries and would reach, in every form that has one."""
    if isinstance(address, ipaddress.IPv4Address):
        return []
    found = [a for a in (address.ipv4_mapped, address.sixtofour) if a is not None]
    if address.teredo is not None:
        found.extend(address.teredo)  # (server, client): either may be where it lands
    translated = address in IPV4_TRANSLATED or any(address in net for net in NAT64)
    compatible = address in IPV4_COMPATIBLE and int(address) > 1  # not :: or ::1
    if translated or compatible:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def address_kind(address: Address) -> str | None:
    """What makes `address` off limits ("loopback", "link-local"...), or None if public."""
    for embedded in embedded_ipv4(address):
        kind = address_kind(embedded)
        if kind is not None:
            return kind
    if any(address in net for net in NAT64):
        # A DNS64 answer on an IPv6-only network: it reaches the public address it carries.
        return None
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


class Parsed(NamedTuple):
    """A webhook URL taken apart: what the checks and the pinned request need."""

    scheme: str
    host: str
    port: int
    path: str
    query: str
    explicit_port: int | None
    literal: Address | None  # the host, when it is an address rather than a name


def parse_target(url: str) -> Parsed:
    """`url` taken apart; Refused if it is not an http(s) URL with a host and a valid port."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:  # a bracketed host that does not close, say
        raise Refused("the webhook URL cannot be read") from exc
    if parts.scheme not in ("http", "https") or not host:
        raise Refused("the webhook URL is not an http:// or https:// URL with a host")
    try:
        explicit_port = parts.port
    except ValueError as exc:
        raise Refused("the webhook URL's port is not a number from 0 to 65535") from exc
    port = explicit_port or (443 if parts.scheme == "https" else 80)
    try:
        literal: Address | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    return Parsed(parts.scheme, host, port, parts.path, parts.query, explicit_port, literal)


def is_reserved_name(target: Parsed) -> bool:
    """Whether the host is a name kept for examples and tests (RFC 2606, 6761): never resolves."""
    name = target.host.rstrip(".").lower()
    return target.literal is None and (name in RESERVED_NAMES or name.endswith(RESERVED_SUFFIXES))


async def addresses_of(target: Parsed, resolve: Resolver, timeout_s: float) -> list[Address]:
    """The addresses the target's host stands for; OSError if it resolves to none in time."""
    if target.literal is not None:
        return [target.literal]
    try:
        found = await asyncio.wait_for(resolve(target.host, target.port), timeout_s)
    except asyncio.TimeoutError as exc:
        raise OSError(f"resolving {target.host} timed out") from exc
    try:
        addresses = [ipaddress.ip_address(a.split("%")[0]) for a in found]
    except ValueError as exc:  # a resolver that answers something else than addresses
        raise OSError(f"{target.host} resolves to something that is not an address") from exc
    if not addresses:
        raise OSError(f"{target.host} resolves to no address")
    return addresses


def check_addresses(target: Parsed, addresses: list[Address], allow_private: bool) -> None:
    """Refused unless every address may be sent to: not just one, since a name may resolve to
    a public address and a private one, and the connection could land on either."""
    where = "" if target.literal is not None else f"{target.host} resolves to "
    for address in addresses:
        if address in METADATA or any(a in METADATA for a in embedded_ipv4(address)):
            raise Refused(f"refused: {where}{address}, a cloud metadata address")
        kind = None if allow_private else address_kind(address)
        if kind is not None:
            raise Refused(f"refused: {where}{address}, a {kind} address ({HINT})")


async def check_new_target(
    url: str, resolve: Resolver, allow_private: bool, timeout_s: float = RESOLVE_TIMEOUT_S
) -> None:
    """Refused if every delivery to `url` would be refused, as far as can be told when the
    alert is created (see the module's docstring for what passes)."""
    target = parse_target(url)
    if is_reserved_name(target):
        return
    try:
        addresses = await addresses_of(target, resolve, timeout_s)
    except OSError:
        return  # DNS may answer by the time a webhook is due; delivery checks again
    check_addresses(target, addresses, allow_private)


async def resolve_target(
    url: str, resolve: Resolver, allow_private: bool, timeout_s: float = RESOLVE_TIMEOUT_S
) -> Target:
    """The Target of `url` once its host is resolved and checked; Refused if it may not be
    sent to. A name that does not resolve raises OSError (worth retrying: DNS recovers)."""
    target = parse_target(url)
    if is_reserved_name(target):
        # Refused without a DNS query, so the demo's example hooks (`serve --demo`) send
        # nothing anywhere.
        raise Refused(f"refused: {target.host} is a reserved example name, which never resolves")
    addresses = await addresses_of(target, resolve, timeout_s)
    check_addresses(target, addresses, allow_private)
    chosen = addresses[0]
    netloc = f"[{chosen}]" if chosen.version == 6 else str(chosen)
    default_port = 443 if target.scheme == "https" else 80
    if target.port != default_port:
        netloc += f":{target.port}"
    host = target.host
    host_header = host if ":" not in host else f"[{host}]"
    if target.explicit_port is not None and target.port != default_port:
        host_header += f":{target.port}"
    pinned = urlunsplit((target.scheme, netloc, target.path or "/", target.query, ""))
    return Target(pinned, host_header, host if target.scheme == "https" else None)
