"""A Phoenix's address as people give it (http://HOST:6006, with or without /v1): light on
purpose (no httpx), as the command line reads it before the app's first frame."""

from __future__ import annotations


def phoenix_root(base_url: str) -> str:
    """Phoenix's address without a trailing slash or /v1."""
    root = base_url.strip().rstrip("/")
    return root.removesuffix("/v1")
