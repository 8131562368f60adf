"""The configured server for a subcommand that talks to it without the app (`annotate`,
`export`): the profile, its keys and its kind resolved exactly as `tracetui` and `tracetui trace
ID` resolve them (tui/config.py, tui/api/kinds.py), and an API error said in one line."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.api.errors import ApiError
    from tui.api.source import TraceSource


class NoServer(Exception):
    """The configuration names no usable server; the message says why (never a key)."""


def open_configured(profile: str | None, base_url: str | None, kind: str | None) -> TraceSource:
    """The source of the profile (flags over environment over file), its warnings printed;
    NoServer when none can be opened."""
    from tui.api.base_url import InvalidBaseUrl
    from tui.api.kinds import checked_address, open_source
    from tui.config import ConfigError, load_settings

    try:
        settings = load_settings(profile=profile, base_url=base_url, kind=kind)
        if not settings.base_url:
            raise ConfigError(
                "No server configured. Set TRACETUI_BASE_URL, pass --base-url, or add a profile "
                f"to {settings.config_path}."
            )
        server_kind, url, note = checked_address(settings.kind, settings.base_url)
        if server_kind != settings.kind:
            settings = load_settings(profile=profile, base_url=base_url, kind=server_kind)
    except (ConfigError, InvalidBaseUrl) as error:
        raise NoServer(error.message) from None
    for warning in settings.warnings:
        print(f"tracetui: warning: {warning}", file=sys.stderr)
    if note:
        print(f"tracetui: {note}", file=sys.stderr)
    return open_source(server_kind, url, settings.api_key, settings.project_keys)


def error_words(error: ApiError) -> str:
    """An API error on one line, as the app says it, with a refusal's fields and why."""
    from tui.api.errors import Conflict, ValidationFailed

    words = f"{error.title}: {error.message}"
    if isinstance(error, (ValidationFailed, Conflict)):
        fields = "; ".join(f"{name}: {why}" for name, why in error.field_messages().items())
        if fields:
            words += f" — {fields}"
    return " ".join(words.split())
