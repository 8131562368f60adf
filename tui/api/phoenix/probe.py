"""Recognising a Phoenix server: `GET /arize_phoenix_version` answers its version in plain text.
Asked only when an address cannot be read as the spec's (no /v1 at its end), so that pointing
tracetui at http://HOST:6006 without `--kind phoenix` says what it found instead of failing."""

from __future__ import annotations

import re

import httpx

from tui.api.phoenix.address import phoenix_root

VERSION = re.compile(r"^\d+\.\d+(\.\d+)?[\w.+-]*$")
PROBE_SECONDS = 3.0


def phoenix_version_at(base_url: str, timeout: float = PROBE_SECONDS) -> str | None:
    """The version of the Phoenix server at `base_url`, or None when it is not one (or does not
    answer). No key is sent: Phoenix answers its version without one."""
    root = phoenix_root(base_url)
    if not root.startswith(("http://", "https://")):
        return None
    try:
        response = httpx.get(f"{root}/arize_phoenix_version", timeout=timeout)
    except (httpx.HTTPError, ValueError):
        return None
    text = response.text.strip() if response.status_code == 200 else ""
    return text if VERSION.match(text) else None
