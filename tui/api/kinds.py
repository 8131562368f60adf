"""Which kind of server a profile names, and the source that reads it: `open_source` makes the
TraceSource of a kind ("spec", "phoenix", or "auto": asked), and `checked_address` checks an
address before the app's first frame. Nothing here is imported until the command line asks:
the spec's client and Phoenix's load only for the kind that is used."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.api.source import TraceSource
    from tui.core.secret import SecretLike

SPEC = "spec"
PHOENIX = "phoenix"
AUTO = "auto"  # no kind given: the server is asked whether it is a Phoenix
KINDS = (SPEC, PHOENIX, AUTO)
PHOENIX_KEY_ENV = "PHOENIX_API_KEY"  # where Phoenix's own clients read its key


def open_source(
    kind: str,
    base_url: str,
    api_key: str | SecretLike | None = None,
    project_keys: Mapping[str, str | SecretLike] | None = None,
) -> TraceSource:
    """The client of a profile's `kind`: "spec", "phoenix", or "auto" (no kind given), which
    asks the server whether it is a Phoenix (`GET /arize_phoenix_version`) and makes the
    client that reads it. The app calls this in the thread that loads the client, beside its
    first frame, so that question never delays the first frame; a Phoenix found that way
    carries the note that says so (`recognised_note`, shown by the app once it is up) and is
    sent $PHOENIX_API_KEY when no key of tracetui's own is set, as a profile of kind phoenix."""
    if kind == AUTO:
        from tui.api.phoenix.probe import phoenix_root_at

        found = phoenix_root_at(base_url)
        if found is not None:
            from tui.api.phoenix.client import PhoenixClient

            root, version = found
            key = api_key if api_key is not None else os.environ.get(PHOENIX_KEY_ENV) or None
            client = PhoenixClient(root, key, project_keys)
            client.recognised_note = recognised_note(root, version)
            return client
        kind = SPEC
    if kind == PHOENIX:
        from tui.api.phoenix.client import PhoenixClient

        return PhoenixClient(base_url, api_key, project_keys)
    if kind != SPEC:
        raise ValueError(f"unknown kind of server {kind!r}: one of {', '.join(KINDS)}")
    from tui.api.client import ApiClient

    return ApiClient(base_url, api_key, project_keys)


def recognised_note(root: str, version: str) -> str:
    """What the app says when it found a Phoenix at an address given without a kind."""
    return (
        f"{root} is Arize Phoenix {version}: reading it as one "
        f'(--kind phoenix, or kind = "phoenix" in the profile, skips this check)'
    )


def checked_address(kind: str, base_url: str) -> tuple[str, str, str | None]:
    """(kind, the base URL as the client takes it, a note for the user or None), before the
    app's first frame. With no kind given ("auto"), an address that is not the spec's (no /v1
    at its end) is asked at once whether it is a Phoenix (it could not be read otherwise): if
    it is, it is read as one and the note says so; if not, InvalidBaseUrl says what is wrong
    with it (and, when nothing answered the question, why). A spec address stays "auto":
    open_source asks it, beside the first frame. A kind given ("spec" or "phoenix") is never
    asked."""
    from tui.api.base_url import InvalidBaseUrl, normalize_base_url

    if kind == PHOENIX:
        from tui.api.phoenix.address import phoenix_root

        return kind, normalize_base_url(phoenix_root(base_url) + "/v1"), None
    try:
        return kind, normalize_base_url(base_url), None
    except InvalidBaseUrl as invalid:
        if kind != AUTO:
            raise
        from tui.api.phoenix.probe import probe_address

        found = probe_address(base_url)
        if found.unreachable is not None:
            raise InvalidBaseUrl(
                f"{invalid.message}. Nor could it be asked whether it is a Phoenix: "
                f"{found.unreachable}"
            ) from None
        if found.root is None or found.version is None:
            raise
    return (
        PHOENIX,
        normalize_base_url(found.root + "/v1"),
        recognised_note(found.root, found.version),
    )
