"""Recognising a Phoenix server: `GET /arize_phoenix_version` answers its version in plain text.

Asked only when no kind was given: at once for an address that cannot be read as the spec's (no
/v1 at its end), else in the thread that loads the client, beside the app's first frame. The
address may hold a path (a Phoenix behind a proxy under /phoenix, or an address copied with /v1
or /v1/traces at its end): Phoenix is asked there without /v1, then at each shorter path down to
the host, so that pointing tracetui at any of them says what it found instead of failing.

Each question is bounded: at most MAX_ANSWER bytes are read, and a server that trickles its
answer is left once `timeout` seconds have passed since the question was sent (its headers
included, which a per-read timeout alone would not bound)."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx

from tui.api.errors import transport_sentence
from tui.api.phoenix.address import phoenix_root

VERSION = re.compile(r"^\d+\.\d+(\.\d+)?[\w.+-]*$")
PROBE_SECONDS = 3.0
MAX_PROBES = 4  # a path deeper than this is not searched all the way to the host
MAX_ANSWER = 200  # bytes: a version is a few characters; anything longer is not one


@dataclass(frozen=True)
class Probe:
    """What an address said when asked whether it is a Phoenix: where one answered and its
    version, or, when nothing answered at all, why (a transport failure in words)."""

    root: str | None = None
    version: str | None = None
    unreachable: str | None = None


@dataclass(frozen=True)
class _NoAnswer:
    sentence: str


def candidate_roots(base_url: str) -> list[str]:
    """Where a Phoenix could answer for `base_url`: its root as given (no /v1), then its
    shorter paths down to the host."""
    root = phoenix_root(base_url)
    parts = urlsplit(root)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return []
    segments = [s for s in parts.path.split("/") if s]
    if segments and segments[-1] == "traces" and segments[-2:-1] == ["v1"]:
        segments = segments[:-2]  # the OTLP endpoint (…/v1/traces)
    roots = []
    for n in range(len(segments), -1, -1):
        path = "/" + "/".join(segments[:n]) if n else ""
        roots.append(urlunsplit((parts.scheme, parts.netloc, path, "", "")))
    return roots[:MAX_PROBES]


def _ask(root: str, timeout: float) -> str | bool | _NoAnswer:
    """The version answered at `root`; False for an answer that is not one; _NoAnswer (why)
    when nothing answered in `timeout` seconds. It runs an event loop of its own: it is asked
    before the app's loop starts, or in the thread that loads the client, never in a loop."""
    if not root.startswith(("http://", "https://")):
        return False
    return asyncio.run(_ask_within(root, timeout))


async def _ask_within(root: str, timeout: float) -> str | bool | _NoAnswer:
    try:
        return await asyncio.wait_for(_version_at(root, timeout), timeout)
    except asyncio.TimeoutError:
        return _NoAnswer(f"it had not finished answering after {timeout:g} s")
    except (httpx.HTTPError, ValueError) as error:
        return _NoAnswer(transport_sentence(error))


async def _version_at(root: str, timeout: float) -> str | bool:
    body = b""
    # Plain HTTP needs no TLS context (building one costs some 30 ms).
    client = httpx.AsyncClient(timeout=timeout, verify=not root.startswith("http:"))
    async with client, client.stream("GET", f"{root}/arize_phoenix_version") as response:
        if response.status_code != 200:
            return False
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_ANSWER:
                return False
    text = body.decode("utf-8", "replace").strip()
    return text if VERSION.match(text) else False


def probe_address(base_url: str, timeout: float = PROBE_SECONDS) -> Probe:
    """Whether a Phoenix answers anywhere under `base_url`. A host that does not answer at all
    is asked once, not once per path."""
    for root in candidate_roots(base_url):
        answer = _ask(root, timeout)
        if isinstance(answer, str):
            return Probe(root, answer)
        if isinstance(answer, _NoAnswer):
            return Probe(unreachable=answer.sentence)
    return Probe()


def phoenix_root_at(base_url: str, timeout: float = PROBE_SECONDS) -> tuple[str, str] | None:
    """(Phoenix's root, its version) for an address given anywhere under it, or None."""
    found = probe_address(base_url, timeout)
    if found.root is None or found.version is None:
        return None
    return found.root, found.version
