"""What the screens ask of a server, whichever it is: `TraceSource`, the protocol both the spec
client (ApiClient) and the Phoenix reader (tui/api/phoenix) satisfy, and `open_source`, which
makes the one a profile's `kind` names. Screens ask a source what it offers (`has_alerts`, and
the `offers_*` flags learnt once by `discover_offers`) instead of knowing which kind of server
it is."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tui.api.client import ApiClient, Page, Waiting
    from tui.api.manage import DeliveryOutcome
    from tui.api.models import (
        Alert,
        KeyInfo,
        Project,
        ProjectChange,
        RotatedSecret,
        Span,
        Trace,
        TraceFilter,
    )
    from tui.api.offers import Offers
    from tui.api.pagination import NextPage
    from tui.api.ratelimit import RateBudget
    from tui.api.request_log import LogEntry
    from tui.core.alert_rules import AlertDraft
    from tui.core.secret import SecretLike

SPEC = "spec"
PHOENIX = "phoenix"
AUTO = "auto"  # no kind given: the server is asked whether it is a Phoenix
KINDS = (SPEC, PHOENIX, AUTO)
PHOENIX_KEY_ENV = "PHOENIX_API_KEY"  # where Phoenix's own clients read its key


@runtime_checkable
class TraceSource(Protocol):
    """A server the app reads: its calls, the API log, and what it offers."""

    base_url: str
    host: str
    log: deque[LogEntry]
    latest_budget: RateBudget | None
    on_wait: Callable[[Waiting], None] | None
    has_alerts: bool
    server_name: str

    async def aclose(self) -> None: ...
    def set_project_key(self, project_id: str, key: str | SecretLike) -> None: ...
    def redact(self, text: str) -> str: ...
    async def list_projects(self) -> list[Project]: ...
    async def create_project(
        self,
        name: str,
        description: str | None = None,
        retention_days: int | None = None,
        idempotency_key: str | None = None,
    ) -> Project: ...
    async def find_project(
        self, name: str, description: str | None = None, retention_days: int | None = None
    ) -> Project | None: ...
    async def list_traces(
        self,
        project_id: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        limit: int | None = 100,
        after: NextPage | None = None,
        include: str | None = None,
        filters: TraceFilter | None = None,
    ) -> Page: ...
    async def list_sessions(
        self,
        project_id: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        limit: int | None = 100,
        after: NextPage | None = None,
        user_id: str | None = None,
    ) -> Page: ...
    def iter_traces(
        self,
        project_id: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        limit: int | None = 500,
    ) -> AsyncIterator[Trace]: ...
    async def get_trace(self, trace_id: str, project_id: str | None = None) -> Trace: ...
    async def list_spans(self, trace_id: str, project_id: str | None = None) -> list[Span]: ...
    async def list_alerts(self, project_id: str) -> list[Alert]: ...
    async def list_alert_events(self, project_id: str, alert_id: str, limit: int = 50) -> Page: ...
    async def create_alert(
        self, project_id: str, draft: AlertDraft, idempotency_key: str | None = None
    ) -> Alert: ...
    async def find_alert(self, project_id: str, draft: AlertDraft) -> Alert | None: ...

    # What a server may offer beyond the spec (tui/api/manage.py): False until discovered.
    @property
    def offers(self) -> Offers: ...
    @property
    def offers_known(self) -> bool: ...
    @property
    def offers_key_management(self) -> bool: ...
    @property
    def offers_workspace_keys(self) -> bool: ...
    @property
    def offers_project_edit(self) -> bool: ...
    @property
    def offers_project_delete(self) -> bool: ...
    @property
    def offers_alert_edit(self) -> bool: ...
    @property
    def offers_alert_delete(self) -> bool: ...
    @property
    def offers_secret_rotation(self) -> bool: ...
    @property
    def offers_alert_test(self) -> bool: ...
    async def discover_offers(self) -> Offers: ...
    async def list_keys(self, project_id: str | None) -> list[KeyInfo]: ...
    async def create_key(
        self, project_id: str | None, label: str, idempotency_key: str | None = None
    ) -> KeyInfo: ...
    async def revoke_key(self, project_id: str | None, key_id: str) -> None: ...
    async def update_project(
        self, project_id: str, changes: dict[str, Any], dry_run: bool = False
    ) -> ProjectChange: ...
    async def delete_project(self, project_id: str) -> None: ...
    async def update_alert(
        self, project_id: str, alert_id: str, changes: dict[str, Any]
    ) -> Alert: ...
    async def pause_alert(self, project_id: str, alert_id: str, paused: bool) -> Alert: ...
    async def mute_alert(self, project_id: str, alert_id: str, until: datetime | None) -> Alert: ...
    async def delete_alert(self, project_id: str, alert_id: str) -> None: ...
    async def rotate_secret(self, project_id: str, alert_id: str) -> RotatedSecret: ...
    async def send_test_event(self, project_id: str, alert_id: str) -> str | None: ...
    async def test_webhook(self, project_id: str, alert_id: str) -> DeliveryOutcome: ...


def missing_feature(source: Any, feature: str) -> str:
    """The sentence that says a source lacks `feature` ("This Phoenix server has no alerts.")."""
    return f"This {getattr(source, 'server_name', 'tracing')} server has no {feature}."


def open_source(
    kind: str,
    base_url: str,
    api_key: str | SecretLike | None = None,
    project_keys: Mapping[str, str | SecretLike] | None = None,
) -> ApiClient:
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
