"""TraceSource: what the screens may ask of a server, whichever it is. The app and the screens hold
a TraceSource; the spec's client (client.py, ApiClient) and Phoenix's (phoenix/client.py) each
implement it, over a transport of their own (transport.py), and page through the one helper
(pages.py).

What a server lacks is said, not guessed: alerts (`has_alerts`), and the management calls of
manage.py and the annotations of annotation_source.py, which a source offers only when its
`discover_offers` says so. By default a source has none of them, and a call to one raises an
ApiError that says so in a sentence. Screens ask these
flags, never which kind of server it is; kinds.py makes the source a profile names.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from tui.api.annotation_source import AnnotationSource
from tui.api.envelopes import read_record
from tui.api.errors import ApiError, NotOffered
from tui.api.keys import Keys
from tui.api.listing import SessionListing, TraceListing, Window, window_fields
from tui.api.models import Project, Record
from tui.api.offers import NOTHING, Offered, Offers, key_offer
from tui.api.pages import Page, ReadItems, every_page, read_page, records_of
from tui.api.transport import Transport, TransportOptions, Waiting

if TYPE_CHECKING:
    from typing_extensions import Self, Unpack

    from tui.api.delivery import DeliveryOutcome
    from tui.api.health import HealthReport
    from tui.api.models import (
        Alert,
        KeyInfo,
        ProjectChange,
        RotatedSecret,
        Span,
        Trace,
        TraceFilter,
    )
    from tui.api.pagination import NextPage
    from tui.api.ratelimit import RateBudget
    from tui.api.request_log import LogEntry
    from tui.core.alert_rules import AlertDraft
    from tui.core.secret import SecretLike

R = TypeVar("R", bound=Record)


def missing_feature(source: Any, feature: str) -> str:
    """The sentence that says a source lacks `feature` ("This Phoenix server has no alerts.")."""
    return f"This {getattr(source, 'server_name', 'tracing')} server has no {feature}."


class TraceSource(AnnotationSource, ABC):
    """A server the app reads: its calls, the API log, and what it offers. Use as
    `async with source:`; a key is a str or a secret (tui.core.secret.Secret, SecretStr). The
    annotation calls are AnnotationSource's (annotation_source.py)."""

    server_name: ClassVar[str] = "tracing"
    has_alerts: ClassVar[bool] = False
    # What the app says once it is up, when it recognised the kind of server (kinds.py).
    recognised_note: str | None = None

    def __init__(
        self,
        base_url: str,
        api_key: str | SecretLike | None = None,
        project_keys: Mapping[str, str | SecretLike] | None = None,
        **options: Unpack[TransportOptions],
    ) -> None:
        # Wrapped first, and the plain values dropped from this frame: a traceback that shows
        # locals (an invalid base_url raises just below) must find no key in them.
        keys = Keys(api_key, project_keys)
        api_key = project_keys = None
        self.transport = Transport(self.api_address(base_url), keys, **options)
        self._offers: Offers | None = None

    @staticmethod
    def api_address(base_url: str) -> str:
        """The base URL of the API of this kind of server, for an address as a user gives it
        (the spec's: as given)."""
        return base_url

    def __repr__(self) -> str:
        # getattr: a traceback's locals show a source whose __init__ raised, half built.
        transport = getattr(self, "transport", None)
        base_url = transport.base_url if transport is not None else None
        projects = transport.keys.projects() if transport is not None else []
        return f"{type(self).__name__}(base_url={base_url!r}, projects_with_keys={projects})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.transport.aclose()

    # -- the transport, as the screens see it ----------------------------------------------------

    @property
    def base_url(self) -> str:
        return self.transport.base_url

    @property
    def host(self) -> str:
        return self.transport.host

    @property
    def log(self) -> deque[LogEntry]:
        """The API log: one entry per request sent."""
        return self.transport.log

    @property
    def latest_budget(self) -> RateBudget | None:
        return self.transport.latest_budget

    @property
    def on_wait(self) -> Callable[[Waiting], None] | None:
        """Told of each wait inside the transport (a retry's backoff, a 429, pacing)."""
        return self.transport.on_wait

    @on_wait.setter
    def on_wait(self, told: Callable[[Waiting], None] | None) -> None:
        self.transport.on_wait = told

    def set_project_key(self, project_id: str, key: str | SecretLike) -> None:
        self.transport.keys.set(project_id, key)

    def redact(self, text: str) -> str:
        """`text` with every key this source holds replaced (servers sometimes echo them)."""
        return self.transport.redact(text)

    # -- what the server offers ------------------------------------------------------------------

    @property
    def offers(self) -> Offers:
        """What the server offers, as learnt; NOTHING until `discover_offers` has answered."""
        return self._offers or NOTHING

    @property
    def offers_known(self) -> bool:
        return self._offers is not None

    offers_key_management = Offered("key_management")
    offers_workspace_keys = Offered("workspace_keys")
    offers_project_edit = Offered("project_edit")
    offers_project_delete = Offered("project_delete")
    offers_alert_edit = Offered("alert_edit")
    offers_alert_delete = Offered("alert_delete")
    offers_secret_rotation = Offered("secret_rotation")
    offers_alert_test = Offered("alert_test")
    offers_project_health = Offered("project_health")

    async def discover_offers(self) -> Offers:
        """What this server offers beyond reading, learnt once: by default nothing."""
        self._offers = self._offers or NOTHING
        return self._offers

    def not_offered(self, action: str) -> NotOffered:
        return NotOffered(f"This {self.server_name} server does not offer {action}.")

    def no_feature(self, feature: str) -> ApiError:
        return ApiError(missing_feature(self, feature), None)

    # -- reading ---------------------------------------------------------------------------------

    @abstractmethod
    async def list_projects(self) -> list[Project]: ...

    async def create_project(
        self,
        name: str,
        description: str | None = None,
        retention_days: int | None = None,
        idempotency_key: str | None = None,
    ) -> Project:
        body = self._project_body(name, description, retention_days)
        return await self._create(Project, "projects", body, None, idempotency_key)

    def _project_body(
        self, name: str, description: str | None, retention_days: int | None
    ) -> dict[str, Any]:
        """A new project's fields as this server takes them."""
        body: dict[str, Any] = {"name": name}
        if description:
            body["description"] = description
        if retention_days is not None:
            body["retention_days"] = retention_days
        return body

    async def find_project(
        self, name: str, description: str | None = None, retention_days: int | None = None
    ) -> Project | None:
        """A project of this name and description (and retention, when given), if one exists:
        after a create whose outcome is unknown, whether it was carried out."""
        for project in await self.list_projects():
            if (
                project.name == name
                and (project.description or None) == (description or None)
                and retention_days in (None, project.retention_days)
            ):
                return project
        return None

    async def list_traces(
        self,
        project_id: str,
        *,
        include: str | None = None,
        filters: TraceFilter | None = None,
        **window: Unpack[Window],
    ) -> Page:
        """One page of traces (Window: which one). `include`: an extension some servers
        offer (the local service: `models`, each row's cost and tokens by model); others ignore
        it or refuse it (a 4xx). `filters`: the search extensions (`offers.trace_filters` says
        which a server takes); a next page's cursor carries them, and they are sent along for
        servers whose cursor does not."""
        fields = window_fields(window)
        return await self._traces(
            TraceListing(project_id, include=include, filters=filters, **fields)
        )

    async def list_sessions(
        self, project_id: str, *, user_id: str | None = None, **window: Unpack[Window]
    ) -> Page:
        """One page of a project's sessions, newest activity first (an extension:
        `offers.sessions` says whether a server has it); a user's alone with `user_id`."""
        fields = window_fields(window)
        return await self._sessions(SessionListing(project_id, user_id=user_id, **fields))

    async def iter_traces(
        self,
        project_id: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        limit: int | None = 500,
    ) -> AsyncIterator[Trace]:
        """Every trace of the range, page after page, each once."""
        pages = every_page(
            lambda after: self.list_traces(
                project_id, start=start, end=end, limit=limit, after=after
            )
        )
        async for page in pages:
            for trace in page.items:
                yield trace

    @abstractmethod
    async def _traces(self, listing: TraceListing) -> Page: ...

    @abstractmethod
    async def _sessions(self, listing: SessionListing) -> Page: ...

    @abstractmethod
    async def get_trace(self, trace_id: str, project_id: str | None = None) -> Trace:
        """One trace with its spans. With `project_id`, that project's trace."""

    @abstractmethod
    async def list_spans(self, trace_id: str, project_id: str | None = None) -> list[Span]:
        """A trace's spans, all pages; `project_id` as for get_trace."""

    async def project_health(self, window: str = "1h", buckets: int = 12) -> HealthReport:
        """Every project's firing alerts and traffic over the last `window`, in `buckets`
        buckets, in one request: an extension (`offers_project_health` says whether a server
        has it; without it, a screen reads each project's traces and alerts instead)."""
        raise self.not_offered("project health at a glance")

    # -- alerts: none unless the server has them (has_alerts) ------------------------------------

    async def list_alerts(self, project_id: str) -> list[Alert]:
        raise self.no_feature("alerts")

    async def list_alert_events(self, project_id: str, alert_id: str, limit: int = 50) -> Page:
        raise self.no_feature("alerts")

    async def create_alert(
        self, project_id: str, draft: AlertDraft, idempotency_key: str | None = None
    ) -> Alert:
        raise self.no_feature("alerts")

    async def find_alert(self, project_id: str, draft: AlertDraft) -> Alert | None:
        raise self.no_feature("alerts")

    # -- management: not offered unless discover_offers says (manage.py) ------------------------

    async def list_keys(self, project_id: str | None) -> list[KeyInfo]:
        raise self.not_offered(key_offer(project_id, "managing")[1])

    async def create_key(
        self, project_id: str | None, label: str, idempotency_key: str | None = None
    ) -> KeyInfo:
        raise self.not_offered(key_offer(project_id, "creating")[1])

    async def revoke_key(self, project_id: str | None, key_id: str) -> None:
        raise self.not_offered(key_offer(project_id, "revoking")[1])

    async def update_project(
        self, project_id: str, changes: dict[str, Any], dry_run: bool = False
    ) -> ProjectChange:
        raise self.not_offered("editing projects")

    async def delete_project(self, project_id: str) -> None:
        raise self.not_offered("deleting projects")

    async def update_alert(self, project_id: str, alert_id: str, changes: dict[str, Any]) -> Alert:
        raise self.not_offered("changing alerts")

    async def pause_alert(self, project_id: str, alert_id: str, paused: bool) -> Alert:
        return await self.update_alert(project_id, alert_id, {"paused": paused})

    async def mute_alert(self, project_id: str, alert_id: str, until: datetime | None) -> Alert:
        """Mute until `until` (None: unmute)."""
        return await self.update_alert(project_id, alert_id, {"muted_until": until})

    async def delete_alert(self, project_id: str, alert_id: str) -> None:
        raise self.not_offered("deleting alerts")

    async def rotate_secret(self, project_id: str, alert_id: str) -> RotatedSecret:
        raise self.not_offered("new webhook secrets")

    async def send_test_event(self, project_id: str, alert_id: str) -> str | None:
        raise self.not_offered("test events")

    async def test_webhook(self, project_id: str, alert_id: str) -> DeliveryOutcome:
        raise self.not_offered("test events")

    # -- for the sources: lists of tolerant records, and creating one ----------------------------

    async def _page(
        self,
        read_items: ReadItems,
        what: str,
        url: str,
        params: dict[str, Any],
        project_id: str | None,
        after: NextPage | None = None,
    ) -> Page:
        """The page after `after` of the list of `what` at `url`, its items read by
        `read_items` (pages.records_of a model, or each_read_by a reader)."""
        return await read_page(
            self.transport,
            url,
            params,
            after,
            what=what,
            read_items=read_items,
            project_id=project_id,
            server_name=self.server_name,
        )

    async def _all(
        self,
        model: type[R],
        what: str,
        url: str,
        project_id: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> list[R]:
        """Every record of the list at `url`, all pages."""
        records: list[R] = []
        read = partial(self._page, records_of(model), what, url, params or {}, project_id)
        async for page in every_page(read):
            records += page.items
        return records

    async def _create(
        self,
        model: type[R],
        url: str,
        body: dict[str, Any],
        project_id: str | None,
        idempotency_key: str | None,
    ) -> R:
        """POST a new record (with an Idempotency-Key): what the server made. An answer that
        does not say what it made leaves the outcome unknown."""
        response = await self.transport.request(
            "POST",
            url,
            project_id=project_id,
            body=body,
            idempotency_key=idempotency_key or uuid.uuid4().hex,
        )
        return model.model_validate(read_record(response, outcome_unknown=True))
