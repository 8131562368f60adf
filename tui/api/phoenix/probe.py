"""Recognising a Phoenix server: `GET /arize_phoenix_version` answers its version in plain text.

Asked only when no kind was given: at once for an address that cannot be read as the spec's (no
/v1 at its end), else in the thread that loads the client, beside the app's first frame. The
address may hold a path (a Phoenix behind a proxy under /phoenix, or an address copied with /v1
or /v1/traces at its end): Phoenix is asked there without /v1, then at each shorter path down to
the host, so that pointing tracetui at any of them says what it found instead of failing."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

import httpx

from tui.api.phoenix.address import phoenix_root

VERSION = re.compile(r"^\d+\.\d+(\.\d+)?[\w.+-]*$")
PROBE_SECONDS = 3.0
MAX_PROBES = 4  # a path deeper than this is not searched all the way to the host


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


def phoenix_version_at(base_url: str, timeout: float = PROBE_SECONDS) -> str | None:
    """The version of the Phoenix server at exactly `base_url` (without /v1), or None when it
    is not one (or does not answer). No key is sent: Phoenix answers its version without one."""
    version = _ask(phoenix_root(base_url), timeout)
    return version if isinstance(version, str) else None


def _ask(root: str, timeout: float) -> str | bool:
    """The version answered at `root`; False for an answer that is not one, True for none."""
    if not root.startswith(("http://", "https://")):
        return False
    try:
        response = httpx.get(f"{root}/arize_phoenix_version", timeout=timeout)
    except (httpx.HTTPError, ValueError):
        return True
    text = response.text.strip() if response.status_code == 200 else ""
    return text if VERSION.match(text) else False


def phoenix_root_at(base_url: str, timeout: float = PROBE_SECONDS) -> tuple[str, str] | None:
    """(Phoenix's root, its version) for an address given anywhere under it, or None. A host
    that does not answer at all is asked once, not once per path."""
    for root in candidate_roots(base_url):
        version = _ask(root, timeout)
        if isinstance(version, str):
            return root, version
        if version is True:
            return None
    return None
