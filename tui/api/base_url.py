"""The client's base URL, checked before anything is imported or sent: it must be http(s), name a
host, end in /v1 and hold no credentials, query or fragment. Light on purpose (no httpx): the
command line checks it before the app starts."""

from __future__ import annotations

from urllib.parse import SplitResult, urlunsplit

from tui.core.urls import split_url


class InvalidBaseUrl(ValueError):
    """The base URL given to the client cannot be used; raised before any request is made."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def normalize_base_url(url: str) -> str:
    """The base URL without a trailing slash; it must be http(s) and end in /v1."""
    text = (url or "").strip()
    parts = split_url(text)
    if parts is None:
        raise InvalidBaseUrl("The base URL cannot be read (a stray [ or ], or a bad port?)")
    shown = _shown_url(parts)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidBaseUrl(
            f"The base URL must start with http:// or https:// and name a host: {shown}"
        )
    if parts.username is not None or parts.password is not None:
        raise InvalidBaseUrl(
            f"The base URL must not hold a user name or password ({shown}): "
            "give the key in TRACETUI_API_KEY or the config file instead."
        )
    if parts.query or parts.fragment:
        raise InvalidBaseUrl(f"The base URL must not have a query or fragment: {shown}")
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        raise InvalidBaseUrl(
            f"The base URL must end in /v1 (for example https://traces.example.com/v1): {shown}"
        )
    return f"{parts.scheme}://{parts.netloc}{path}"


def _shown_url(parts: SplitResult) -> str:
    """A URL as errors show it: never its user name, password, query or fragment (a key pasted
    into the wrong place must not be echoed back)."""
    host = parts.netloc.rpartition("@")[2]
    path = parts.path.rpartition("@")[2]
    return repr(urlunsplit((parts.scheme, host, path, "", "")))
