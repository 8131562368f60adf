"""What the screens ask of a server, whichever it is: `TraceSource`, the protocol both the spec
client (ApiClient) and the Phoenix reader (tui/api/phoenix) satisfy, and `open_source`, which
makes the one a profile's `kind` names. Screens ask a source what it offers (`has_alerts`, and
the `offers_*` flags learnt once by `discover_offers`) instead of knowing which kind of server
it is."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tui.api.client import ApiClient, Page, Waiting
    from tui.api.models import Alert, KeyInfo, Project, ProjectChange, RotatedSecret, Span, Trace
    from tui.api.offers import Offers
    from tui.api.pagination import NextPage
    from tui.api.ratelimit import RateBudget
    from tui.api.request_log import LogEntry
    from tui.core.alert_rules import AlertDraft
    from tui.core.secret import SecretLike

SPEC = "spec"
PHOENIX = "phoenix"
KINDS = (SPEC, PHOENIX)


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


def missing_feature(source: Any, feature: str) -> str:
    """The sentence that says a source lacks `feature` ("This Phoenix server has no alerts.")."""
    return f"This {getattr(source, 'server_name', 'tracing')} server has no {feature}."


def open_source(
    kind: str,
    base_url: str,
    api_key: str | SecretLike | None = None,
    project_keys: Mapping[str, str | SecretLike] | None = None,
) -> ApiClient:
    """The client of a profile's `kind` ("spec", the default, or "phoenix")."""
    if kind == PHOENIX:
        from tui.api.phoenix.client import PhoenixClient

        return PhoenixClient(base_url, api_key, project_keys)
    if kind != SPEC:
        raise ValueError(f"unknown kind of server {kind!r}: one of {', '.join(KINDS)}")
    from tui.api.client import ApiClient

    return ApiClient(base_url, api_key, project_keys)


def checked_address(kind: str, base_url: str) -> tuple[str, str, str | None]:
    """(kind, the base URL as the client takes it, a note for the user or None). An address
    that is not the spec's (no /v1 at its end) is asked whether it is a Phoenix: if it is, it
    is read as one and the note says so; if not, InvalidBaseUrl says what is wrong with it.
    Only that failing case makes a request: start-up never waits on a probe otherwise."""
    from tui.api.base_url import InvalidBaseUrl, normalize_base_url

    if kind == PHOENIX:
        from tui.api.phoenix.address import phoenix_root

        return kind, normalize_base_url(phoenix_root(base_url) + "/v1"), None
    try:
        return kind, normalize_base_url(base_url), None
    except InvalidBaseUrl:
        from tui.api.phoenix.probe import phoenix_version_at

        version = phoenix_version_at(base_url)
        if version is None:
            raise
    from tui.api.phoenix.address import phoenix_root

    note = (
        f"{phoenix_root(base_url)} is Arize Phoenix {version}: reading it as one "
        f'(--kind phoenix, or kind = "phoenix" in the profile, skips this check)'
    )
    return PHOENIX, normalize_base_url(phoenix_root(base_url) + "/v1"), note
