"""ApiClient: the async client of the tracing service's v1 API.

One httpx.AsyncClient per base URL. Each request carries the key of its project (or the default
key). GETs are retried with exponential backoff and jitter on connection errors, timeouts, 502,
503 and 504, and after a 429's Retry-After, all bounded in count and total time. A POST is retried
only when the connection was never made, and carries an Idempotency-Key so that servers which
support it never create twice. Requests are paced per key to stay under the server's rate limit.

Keys (keys.py), the API log's entries (request_log.py) and reading a body (envelopes.py) live in
modules of their own; the management calls in manage.py. What stays here (~590 lines) is one
piece: the request loop, paging over it, and the API's calls, which differ only in the paths and
records they give that loop.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import httpx

from tui.api.base_url import normalize_base_url
from tui.api.envelopes import read_json, unwrap_record
from tui.api.errors import (
    ApiError,
    BadResponse,
    ConnectionFailed,
    RateLimited,
    error_for_response,
    never_sent,
    transport_error,
)
from tui.api.keys import Keys
from tui.api.manage import ManageCalls
from tui.api.models import Alert, AlertEvent, Project, Record, Session, Span, Trace, TraceFilter
from tui.api.pagination import NextPage, cursor_from_url, extract_items, extract_next
from tui.api.ratelimit import Pacer, RateBudget, budget_from_headers
from tui.api.readers import has_spans, read_records, read_trace, read_trace_fast
from tui.api.request_log import LogEntry, log_entry
from tui.core.alert_rules import AlertDraft
from tui.core.gcpause import gc_paused
from tui.core.secret import SecretLike
from tui.core.urls import is_loopback, join_url, split_url

log = logging.getLogger("tracetui.api")
R = TypeVar("R", bound=Record)
MAX_PAGES = 10_000  # a hard stop for any paging loop, whatever the server says
MIN_PACING_SHOWN = 0.5  # the token bucket's short waits are not worth telling anyone about


def iso(moment: datetime) -> str:
    """A datetime as the spec's ISO 8601 with milliseconds and Z."""
    utc = moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class Waiting:
    """The client is about to wait before sending a request again, or at all: `reason` is
    "retry" (after `error`, with backoff), "rate_limit" (a 429's Retry-After) or "pacing" (the
    server's budget is nearly spent). A screen can count the wait down instead of hanging."""

    reason: str
    seconds: float
    error: ApiError | None = None
    next_try: int = 1


@dataclass
class Page:
    """One page of a list: its records, where the next page is, and how many of the server's
    items were not records at all (not JSON objects) and were left out: the screens say so."""

    items: list[Any]
    next_page: NextPage | None
    dropped: int = 0


class ApiClient(ManageCalls):
    """The v1 API (and, in manage.py, the management calls a server may offer). Use as `async with ApiClient(base_url, key, project_keys) as client:`.
    A key is a str or a secret (tui.core.secret.Secret, pydantic's SecretStr)."""

    # What this server offers, for the screens to ask (tui/api/source.py): the spec has alerts.
    has_alerts = True
    server_name = "tracing"

    def __init__(
        self,
        base_url: str,
        api_key: str | SecretLike | None = None,
        project_keys: Mapping[str, str | SecretLike] | None = None,
        *,
        timeout: float = 20.0,
        transport: httpx.AsyncBaseTransport | None = None,
        max_retries: int = 4,
        max_rate_limit_retries: int = 3,
        retry_budget: float = 30.0,
        retry_after_cap: float = 60.0,
        pacer: Pacer | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        log_size: int = 500,
        on_wait: Callable[[Waiting], None] | None = None,
    ) -> None:
        # Wrapped first, and the plain values dropped from this frame: a traceback that shows
        # locals (an invalid base_url raises just below) must find no key in them.
        self._keys = Keys(api_key, project_keys)
        api_key = project_keys = None
        self.base_url = normalize_base_url(base_url)
        self._scheme, self.host = urlsplit(self.base_url)[:2]
        self._on_loopback = is_loopback(urlsplit(self.base_url).hostname or "")
        self.max_retries = max_retries
        self.max_rate_limit_retries = max_rate_limit_retries
        self.retry_budget = retry_budget
        self.retry_after_cap = retry_after_cap
        self.pacer = pacer or Pacer()
        self._sleep = sleep
        # Told of every wait longer than a moment (the app counts it down on screen).
        self.on_wait = on_wait
        self.log: deque[LogEntry] = deque(maxlen=log_size)
        self.budgets: dict[str, RateBudget] = {}
        self.latest_budget: RateBudget | None = None
        self._http = httpx.AsyncClient(
            base_url=self.base_url + "/",
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            transport=transport,
            follow_redirects=False,  # a redirect could carry the key to another host
            # Plain HTTP needs no TLS context, and building one (CA bundle) costs 30 ms of
            # start-up. Only base_url's scheme and host are ever requested (see _page_request).
            verify=self._scheme != "http",
            headers={"Accept": "application/json", "User-Agent": "tracetui"},
        )

    def __repr__(self) -> str:
        # getattr: a traceback's locals show a client whose __init__ raised, half built.
        base_url = getattr(self, "base_url", None)
        projects = self._keys.projects()
        return f"ApiClient(base_url={base_url!r}, projects_with_keys={projects})"

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # -- keys ------------------------------------------------------------------------------------

    def set_project_key(self, project_id: str, key: str | SecretLike) -> None:
        self._keys.set(project_id, key)

    def redact(self, text: str) -> str:
        """`text` with every key this client holds replaced (servers sometimes echo them)."""
        return self._keys.redact(text)

    # -- the request loop ------------------------------------------------------------------------

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with full jitter: about 0.25, 0.5, 1, 2... seconds, at most 8."""
        return float(min(8.0, 0.25 * 2 ** (attempt - 1)) * random.uniform(0.5, 1.5))

    def _record(
        self,
        method: str,
        url: str,
        started: float,
        attempt: int,
        response: httpx.Response | None = None,
        error: ApiError | None = None,
    ) -> None:
        self.log.append(log_entry(method, url, started, attempt, self.redact, response, error))

    async def _request(
        self,
        method: str,
        url: str,
        *,
        project_id: str | None = None,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        idempotency_key: str | None = None,
    ) -> httpx.Response:
        is_get = method == "GET"
        key_name = self._keys.name_for(project_id)
        auth = self._keys.auth_for(project_id)
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        deadline = time.monotonic() + self.retry_budget
        # `tries` counts every request sent (the API log shows it); `failures` only the failed
        # attempts that count against max_retries: waiting out a 429 is not one of them.
        tries = failures = rate_limited = 0
        while True:
            tries += 1
            await self.pacer.acquire(key_name, self._pacing_wait)
            started = time.monotonic()
            response: httpx.Response | None = None
            delay: float | None = None
            try:
                response = await self._http.request(
                    method, url, params=params, json=body, headers=headers, auth=auth
                )
            except (httpx.TransportError, httpx.InvalidURL) as exc:
                error: ApiError = transport_error(exc, self.host, is_get=is_get)
                log.debug("%s %s: %s", method, url, self.redact(repr(exc)))
                # One that never reached the server is safe to send again, even a POST.
                retryable = never_sent(exc) or (is_get and not isinstance(exc, httpx.InvalidURL))
            else:
                self._observe(key_name, response)
                if response.status_code < 300:
                    self._record(method, str(response.request.url), started, tries, response)
                    return response
                error = self._error_for(response, outcome_unknown=not is_get)
                retryable = is_get and response.status_code in (502, 503, 504)
                if isinstance(error, RateLimited):
                    rate_limited += 1
                    retryable = is_get and rate_limited <= self.max_rate_limit_retries
                    delay = error.retry_after
            self._record(
                method,
                str(response.request.url) if response else url,
                started,
                tries,
                response,
                error,
            )
            if delay is None:
                failures += 1
            if isinstance(error, ConnectionFailed) and self._on_loopback and failures > 1:
                # Nothing listens on this machine's port: no point in trying for long.
                retryable = False
            if not retryable or failures > self.max_retries:
                raise error
            reason = "rate_limit" if delay is not None else "retry"
            if delay is None:  # transient failures share one time budget; 429 waits are capped
                delay = self._backoff(failures)
                if time.monotonic() + delay > deadline:
                    raise error
            self._waiting(Waiting(reason, delay, error, tries + 1))
            await self._sleep(delay)

    def _pacing_wait(self, seconds: float) -> None:
        if seconds >= MIN_PACING_SHOWN:
            self._waiting(Waiting("pacing", seconds))

    def _waiting(self, waiting: Waiting) -> None:
        if self.on_wait is not None:
            self.on_wait(waiting)

    def _error_for(self, response: httpx.Response, outcome_unknown: bool) -> ApiError:
        return error_for_response(
            response, self.redact, self.retry_after_cap, outcome_unknown=outcome_unknown
        )

    def _observe(self, key_name: str, response: httpx.Response) -> None:
        budget = budget_from_headers(response.headers)
        if budget is None:
            return
        # Concurrent responses can arrive out of order: within one window, the lowest count
        # left is the true one.
        known = self.budgets.get(key_name)
        if (
            known is not None
            and known.reset_at == budget.reset_at
            and known.remaining is not None
            and budget.remaining is not None
            and known.remaining < budget.remaining
        ):
            budget = known
        self.budgets[key_name] = budget
        self.latest_budget = budget
        self.pacer.observe(key_name, budget)

    # -- lists and paging ------------------------------------------------------------------------

    def _page_request(
        self, url: str, params: dict[str, Any], page: NextPage | None
    ) -> tuple[str, dict[str, Any]] | None:
        """(url, params) of the page after `page`; None when it cannot be followed safely."""
        if page is None:
            return url, params
        if page.cursor is not None:
            return url, {**params, "cursor": page.cursor}
        assert page.url is not None
        absolute = join_url(self.base_url + "/", page.url) or ""
        parts = split_url(absolute)
        if parts is not None and (parts.scheme, parts.netloc) == (self._scheme, self.host):
            return absolute, {}
        cursor = cursor_from_url(page.url)
        if cursor is not None:  # another host: take its cursor, never send our key there
            return url, {**params, "cursor": cursor}
        log.warning("not following a next-page link to another host")
        return None

    async def _page(
        self,
        model: type[R],
        resource: str,
        url: str,
        params: dict[str, Any],
        project_id: str | None,
        after: NextPage | None = None,
    ) -> Page:
        target = self._page_request(url, params, after)
        if target is None:
            return Page([], None)
        # No params at all for a next-page URL: httpx would replace its query with empty ones.
        params_or_none = target[1] or None
        response = await self._request(
            "GET", target[0], project_id=project_id, params=params_or_none
        )
        body = read_json(response)
        items = extract_items(body, resource)
        if items is None:
            raise BadResponse(
                f"The server's answer holds no list of {resource} (HTTP {response.status_code})",
                response.status_code,
            )
        records, dropped = read_records(model, items)
        return Page(records, extract_next(body, response.headers), dropped)

    async def _pages(
        self,
        model: type[R],
        resource: str,
        url: str,
        params: dict[str, Any],
        project_id: str | None,
    ) -> AsyncIterator[Page]:
        """Every page; stops at no cursor, an empty page, or a cursor already seen."""
        seen: set[str] = set()
        after: NextPage | None = None
        for _ in range(MAX_PAGES):
            page = await self._page(model, resource, url, params, project_id, after)
            yield page
            after = page.next_page
            if after is None or not page.items or after.identity in seen:
                return
            seen.add(after.identity)

    async def _all(
        self, model: type[R], resource: str, url: str, project_id: str | None = None
    ) -> list[Any]:
        records: list[Any] = []
        async for page in self._pages(model, resource, url, {}, project_id):
            records += page.items
        return records

    # -- the API ---------------------------------------------------------------------------------

    async def list_projects(self) -> list[Project]:
        return await self._all(Project, "projects", "projects")

    async def create_project(
        self,
        name: str,
        description: str | None = None,
        retention_days: int | None = None,
        idempotency_key: str | None = None,
    ) -> Project:
        body = _project_body(name, description, retention_days)
        return await self._create(Project, "projects", body, None, idempotency_key)

    async def find_project(
        self, name: str, description: str | None = None, retention_days: int | None = None
    ) -> Project | None:
        """A project with exactly these fields, if one exists: after a create whose outcome is
        unknown, whether it was carried out."""
        body = _project_body(name, description, retention_days)
        return _first_like(await self.list_projects(), body)

    def _trace_params(
        self, project_id: str, start: datetime | None, end: datetime | None, limit: int | None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"project_id": project_id}
        if start is not None:
            params["from"] = iso(start)
        if end is not None:
            params["to"] = iso(end)
        if limit is not None:
            params["limit"] = limit
        return params

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
    ) -> Page:
        """One page of traces; pass the previous page's `next_page` as `after` for the next.
        `include`: an extension some servers offer (the local service: `models`, each row's
        cost and tokens by model); others ignore the parameter or refuse it (a 4xx).
        `filters`: the search extensions (offers.trace_filters says which a server takes);
        a next page's cursor carries them, and they are sent along for servers whose does not."""
        params = self._trace_params(project_id, start, end, limit)
        if include:
            params["include"] = include
        if filters is not None:
            params.update(filters.params())
        return await self._page(Trace, "traces", "traces", params, project_id, after)

    async def list_sessions(
        self,
        project_id: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        limit: int | None = 100,
        after: NextPage | None = None,
        user_id: str | None = None,
    ) -> Page:
        """One page of a project's sessions, newest last_seen first (an extension: a server
        without it answers 404, NotFound; offers.sessions says beforehand)."""
        params = self._trace_params(project_id, start, end, limit)
        del params["project_id"]  # in the path
        if user_id:
            params["user_id"] = user_id
        url = f"projects/{_segment(project_id)}/sessions"
        return await self._page(Session, "sessions", url, params, project_id, after)

    async def iter_traces(
        self,
        project_id: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        limit: int | None = 500,
    ) -> AsyncIterator[Trace]:
        """Every trace of the range, page after page, each once."""
        params = self._trace_params(project_id, start, end, limit)
        async for page in self._pages(Trace, "traces", "traces", params, project_id):
            for trace in page.items:
                yield trace

    async def get_trace(self, trace_id: str, project_id: str | None = None) -> Trace:
        """One trace with its spans (fetched from /spans if the server left them out). With
        `project_id`, that project's trace: servers that scope trace ids by project (the local
        service) read it as the project whose trace this is; others ignore it."""
        response = await self._request(
            "GET",
            f"traces/{_segment(trace_id)}",
            project_id=project_id,
            params=_in_project(project_id) or None,
        )
        with gc_paused():  # a big trace is a million small objects: see tui/core/gcpause.py
            trace = read_trace_fast(response.content)
            if trace is not None:
                return trace
            body = unwrap_record(read_json(response))
            if not isinstance(body, dict):
                raise BadResponse(
                    f"The server's answer is not a trace (HTTP {response.status_code})"
                )
            trace = read_trace(body)
        if not has_spans(body):
            trace.spans = await self.list_spans(trace_id, project_id)
        return trace

    async def list_spans(self, trace_id: str, project_id: str | None = None) -> list[Span]:
        """A trace's spans, all pages; `project_id` as for get_trace."""
        url = f"traces/{_segment(trace_id)}/spans"
        records: list[Span] = []
        async for page in self._pages(Span, "spans", url, _in_project(project_id), project_id):
            records += page.items
        return records

    async def list_alerts(self, project_id: str) -> list[Alert]:
        return await self._all(
            Alert, "alerts", f"projects/{_segment(project_id)}/alerts", project_id
        )

    async def list_alert_events(self, project_id: str, alert_id: str, limit: int = 50) -> Page:
        """The newest page of an alert's history, on servers that keep one (an extension: a
        server that does not answers 404, NotFound)."""
        url = f"projects/{_segment(project_id)}/alerts/{_segment(alert_id)}/events"
        return await self._page(AlertEvent, "events", url, {"limit": limit}, project_id)

    async def create_alert(
        self, project_id: str, draft: AlertDraft, idempotency_key: str | None = None
    ) -> Alert:
        url = f"projects/{_segment(project_id)}/alerts"
        alert = await self._create(Alert, url, draft.body(), project_id, idempotency_key)
        if alert.webhook_secret is not None:  # shown once by the app, scrubbed everywhere else
            self._keys.remember(alert.webhook_secret)
        return alert

    async def find_alert(self, project_id: str, draft: AlertDraft) -> Alert | None:
        """An alert of the project with exactly these fields, if one exists (see find_project)."""
        return _first_like(await self.list_alerts(project_id), draft.body())

    async def _create(
        self,
        model: type[R],
        url: str,
        body: dict[str, Any],
        project_id: str | None,
        idempotency_key: str | None,
    ) -> R:
        response = await self._request(
            "POST",
            url,
            project_id=project_id,
            body=body,
            idempotency_key=idempotency_key or uuid.uuid4().hex,
        )
        try:
            data = unwrap_record(read_json(response))
        except BadResponse as error:  # the server said yes, but not what it made
            raise BadResponse(error.message, error.status, outcome_unknown=True) from None
        if not isinstance(data, dict):
            raise BadResponse(
                f"The server's answer is not a record (HTTP {response.status_code})",
                response.status_code,
                outcome_unknown=True,
            )
        return model.model_validate(data)


def _project_body(name: str, description: str | None, retention_days: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name}
    if description:
        body["description"] = description
    if retention_days is not None:
        body["retention_days"] = retention_days
    return body


def _first_like(records: list[R], body: dict[str, Any]) -> R | None:
    """The first record whose fields equal every field of a create's body."""
    for record in records:
        if all(getattr(record, field, None) == value for field, value in body.items()):
            return record
    return None


def _in_project(project_id: str | None) -> dict[str, Any]:
    """The query that names a trace's project, when it is known."""
    return {"project_id": project_id} if project_id else {}


def _segment(value: str) -> str:
    """An id made safe to put in a URL path (no slashes or dots sneaking in other routes)."""
    return quote(value, safe="").replace(".", "%2E")
