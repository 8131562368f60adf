"""The webhook delivery worker: sends what the outbox holds, retries, and records every attempt.

It runs in the service's event loop as one task that picks due deliveries from the store
(`webhook_deliveries`, so they survive a restart) and sends each attempt in a task of its own,
as soon as it is due: at most `concurrency` (16) at once in all and at most `per_host` (4) at
once per receiver (scheme, host and port). Attempts wait on nothing else: not on the other
webhooks of the same alert (a firing webhook whose receiver hangs does not hold back the alert's
next one, nor its retries), not on other alerts'. A slow or dead receiver holds at most its own
`per_host` slots, each for at most `timeout_s`, so the other receivers always have the rest;
never evaluation (another thread) and never the API (the store is read in threads; no request
waits on a webhook). Webhooks of one alert may therefore arrive out of order (retries reorder
them anyway): receivers order them by their `timestamp`. The store is called in daemon threads
(threads.py), not the loop's executor: a call still waiting when the service stops (a locked or
silent database) is abandoned, and never holds up the process's exit.

An attempt: resolve and check the target (targets.py; refused: recorded as a failed delivery
with the reason, not retried), sign (signing.py, a new timestamp each time, the same
webhook-id), POST with redirects not followed, read at most BODY_LIMIT bytes of the answer,
all within `timeout_s`. A 2xx delivers. Anything else (another status, a redirect, a timeout,
a refused connection, a name that does not resolve) is retried with the same webhook-id after
RETRY_DELAYS_S: the first retry within 10 s, then backing off, 5 attempts over about 10
minutes. Each attempt is an event in the alert's history: time, status code or error,
duration.

Replicas on one database share the outbox: a due delivery is claimed (claim_deliveries: the
replica's `holder` id and an expiry, CLAIM_MARGIN_S past the timeout) before its attempt
starts, in the statement that checks it is still due and unclaimed, so two replicas never
attempt one delivery in parallel. Recording the attempt drops the claim, so any replica may
make the retry; a replica killed mid-attempt leaves a claim that expires, and another replica
retries the delivery under the same webhook-id. A stop releases the replica's claims. With
SQLite one process holds every claim: the same protocol, trivially its own. Errors are described in fixed words: never the URL (a Slack or Discord webhook URL
is itself a secret), never the secret.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import time
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple
from urllib.parse import urlsplit

import httpx

from tui.server.alerts import signing
from tui.server.alerts.targets import Refused, Resolver, resolve_target, system_resolver
from tui.server.config import ServerConfig
from tui.server.store.alert_rows import (
    AlertEventRow,
    AlertRow,
    AlertSecretRow,
    DeliveryRow,
    new_event_id,
)
from tui.server.store.protocol import TraceStore
from tui.server.threads import in_daemon_thread

STANDALONE = "standalone"  # the holder of a worker that is told no replica id

log = logging.getLogger("tracetui.server")

RETRY_DELAYS_S = (5.0, 30.0, 120.0, 480.0)  # after attempts 1-4; the 5th is the last
MAX_ATTEMPTS = len(RETRY_DELAYS_S) + 1
JITTER = 0.1  # up to 10% later, so receivers that failed together are not retried together
BODY_LIMIT = 64 * 1024
CONCURRENCY = 16
PER_HOST = 4
DUE_READ = 1024  # due deliveries looked at per read: those of a full receiver are passed over
POLL_S = 1.0  # how often the outbox is looked at when nothing wakes the worker
# A claim lasts the attempt's timeout plus this: long enough for its outcome to be recorded
# (which drops the claim), short enough that a dead replica's delivery is soon retried.
CLAIM_MARGIN_S = 20.0
USER_AGENT = "tracetui-webhooks/1"
RELEASE_S = 2.0  # a stop waits this long for its claims to be released (they expire anyway)


class Outcome(NamedTuple):
    status_code: int | None
    error: str | None
    ok: bool
    final: bool  # no retry, whatever attempts are left (a refused target)


class Job(NamedTuple):
    delivery: DeliveryRow
    alert: AlertRow | None
    secret: AlertSecretRow | None
    receiver: str  # receiver_of(alert)


def retry_delay_ms(attempt: int, rng: random.Random) -> int:
    """How long after failed attempt number `attempt` (1-based) the next one is due."""
    delay = RETRY_DELAYS_S[attempt - 1]
    return int(delay * (1 + JITTER * rng.random()) * 1000)


def receiver_of(alert: AlertRow | None) -> str:
    """Where an alert's webhook goes, as scheme://host:port ("" if none can be read): what
    per_host counts. Two services on one machine are two receivers."""
    if alert is None:
        return ""
    try:
        parts = urlsplit(alert.webhook_url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return f"{parts.scheme}://{parts.hostname or ''}:{port}"
    except ValueError:
        return ""


def describe(error: BaseException, timeout_s: float) -> str:
    """An attempt's failure in fixed words: exception messages can quote the URL."""
    if isinstance(error, (asyncio.TimeoutError, httpx.TimeoutException)):
        return f"timed out after {timeout_s:g} s"
    if isinstance(error, httpx.ConnectError):
        return "could not connect (refused or unreachable)"
    if isinstance(error, httpx.RemoteProtocolError):
        return "the receiver broke off or answered outside HTTP"
    if isinstance(error, OSError):
        return "the host name did not resolve"
    if isinstance(error, httpx.HTTPError):
        return f"HTTP error ({type(error).__name__})"
    return f"failed ({type(error).__name__})"


class DeliveryWorker:
    """Delivers webhooks between `start` and `stop` (both in the service's event loop).
    `clock` (epoch ms) schedules attempts; `wall` (unix seconds) is the signatures' timestamp,
    which receivers compare with their own clocks."""

    def __init__(
        self,
        store: TraceStore,
        clock: Callable[[], int],
        allow_private: bool = False,
        resolve: Resolver = system_resolver,
        timeout_s: float = ServerConfig.webhook_timeout_s,
        concurrency: int = CONCURRENCY,
        per_host: int = PER_HOST,
        wall: Callable[[], float] = time.time,
        holder: str = STANDALONE,
    ) -> None:
        self.store = store
        self.holder = holder  # this replica, as its claims name it
        self.clock = clock
        self.allow_private = allow_private
        self.resolve = resolve
        self.timeout_s = timeout_s
        self.concurrency = concurrency
        self.per_host = per_host
        self.wall = wall
        self.rng = random.Random()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        self._main: asyncio.Task[None] | None = None
        self._attempts: dict[str, asyncio.Task[None]] = {}  # by delivery id
        self._busy_receivers: Counter[str] = Counter()
        self._client: httpx.AsyncClient | None = None
        # Reads of the outbox begun and ended: "after this wake, nothing was due" is a read
        # begun after it that has ended with nothing in flight (tests wait on it, not a pause).
        self.reads_begun = 0
        self.reads_ended = 0

    # -- life ------------------------------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        # No proxies from the environment: they would send the request somewhere else than
        # the address that was checked.
        self._client = httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,
            timeout=httpx.Timeout(self.timeout_s),
            limits=httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=0),
        )
        self._main = asyncio.create_task(self._run(), name="deliver-webhooks")

    async def stop(self) -> None:
        """Stop now: attempts in flight are cancelled and stay due (the next start sends them
        again, under the same webhook-id)."""
        self._stopping.set()
        self._wake.set()
        tasks = [t for t in (self._main, *self._attempts.values()) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
        self._loop = None
        # Another replica (or this one started again, under a new id) may take them now.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                in_daemon_thread(
                    functools.partial(self.store.release_claims, self.holder), "release-claims"
                ),
                RELEASE_S,
            )

    def running(self) -> bool:
        return self._main is not None and not self._main.done()

    def wake(self) -> None:
        """Look at the outbox now (callable from any thread)."""
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(self._wake.set)

    def in_flight(self) -> int:
        return len(self._attempts)

    # -- the loop --------------------------------------------------------------------------------

    async def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.clear()
            self.reads_begun += 1
            try:
                await self._start_due()
            except Exception as error:
                log.warning("webhook outbox unreadable (%s)", type(error).__name__)
            self.reads_ended += 1
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POLL_S)

    async def _start_due(self) -> None:
        """Start an attempt for each due delivery that has a free slot."""
        free = self.concurrency - len(self._attempts)
        if free <= 0:
            return
        # Taken here, on the loop, before the outbox is read: an attempt that finishes while
        # the read runs (its row read as still due, then its id leaving `_attempts`) must not
        # be started again from that stale row. No attempt starts during the read: only this
        # method starts them, so slots only free up meanwhile.
        in_flight = set(self._attempts)
        busy = Counter(self._busy_receivers)
        due = functools.partial(self._due, in_flight, busy, free)
        for job in await in_daemon_thread(due, "due-webhooks"):
            if len(self._attempts) >= self.concurrency or self._stopping.is_set():
                break
            delivery = job.delivery
            if delivery.id in self._attempts:
                continue
            self._busy_receivers[job.receiver] += 1
            task = asyncio.create_task(self._attempt(job), name=f"webhook {delivery.id}")
            self._attempts[delivery.id] = task

    def _due(self, in_flight: set[str], busy: Counter[str], free: int) -> list[Job]:
        """Up to `free` due deliveries to start, the longest waiting first, with their alerts
        and secrets: not those in flight when the read began, nor those whose receiver has
        `per_host` attempts running (`busy`, counted on as they are picked). In a thread: the
        store blocks."""
        jobs: list[Job] = []
        alerts: dict[str, tuple[AlertRow | None, AlertSecretRow | None]] = {}
        now = self.clock()
        for delivery in self.store.due_deliveries(now, DUE_READ, self.holder):
            if delivery.id in in_flight:
                continue
            if delivery.alert_id not in alerts:
                alerts[delivery.alert_id] = (
                    self.store.get_alert(delivery.alert_id),
                    self.store.alert_secret(delivery.alert_id),
                )
            alert, secret = alerts[delivery.alert_id]
            receiver = receiver_of(alert)
            if busy[receiver] >= self.per_host:
                continue
            busy[receiver] += 1
            jobs.append(Job(delivery, alert, secret, receiver))
            if len(jobs) >= free:
                break
        # Only what this replica claims is attempted: another may have claimed some meanwhile.
        # The claimed rows are the latest (their attempts so far), not those read above.
        until = now + int((self.timeout_s + CLAIM_MARGIN_S) * 1000)
        claimed = {
            row.id: row
            for row in self.store.claim_deliveries(
                [job.delivery.id for job in jobs], self.holder, now, until
            )
        }
        return [
            job._replace(delivery=claimed[job.delivery.id])
            for job in jobs
            if job.delivery.id in claimed
        ]

    async def _attempt(self, job: Job) -> None:
        delivery = job.delivery
        try:
            number = delivery.attempts + 1
            started = time.perf_counter()
            outcome = await self._outcome(job)
            duration_ms = int((time.perf_counter() - started) * 1000)
            if outcome.ok:
                status, next_at = "delivered", None
            elif outcome.final or number >= MAX_ATTEMPTS:
                status, next_at = "failed", None
            else:
                status, next_at = "pending", self.clock() + retry_delay_ms(number, self.rng)
            event = AlertEventRow(
                id=new_event_id("dlv"),
                alert_id=delivery.alert_id,
                kind="delivery",
                at=self.clock(),
                event_type=delivery.event_type,
                webhook_id=delivery.id,
                attempt=number,
                status_code=outcome.status_code,
                error=outcome.error,
                duration_ms=duration_ms,
                ok=outcome.ok,
            )
            record = functools.partial(
                self.store.record_attempt, delivery.id, event, next_at, status
            )
            await in_daemon_thread(record, "record-attempt")
        except Exception as error:
            # Not recorded: the delivery stays due and is tried again at the next look.
            log.warning("webhook attempt not recorded (%s)", type(error).__name__)
        finally:
            self._attempts.pop(delivery.id, None)
            self._busy_receivers[job.receiver] -= 1
            if self._busy_receivers[job.receiver] <= 0:
                del self._busy_receivers[job.receiver]
            self._wake.set()  # a slot is free: the next due delivery may go

    async def _outcome(self, job: Job) -> Outcome:
        if job.alert is None or job.secret is None:
            return Outcome(None, "the alert no longer exists", False, True)
        try:
            code = await asyncio.wait_for(
                self._send(job.alert, job.secret, job.delivery), self.timeout_s
            )
        except Refused as refused:
            return Outcome(None, str(refused), False, True)
        except Exception as error:
            return Outcome(None, describe(error, self.timeout_s), False, False)
        if 200 <= code < 300:
            return Outcome(code, None, True, False)
        if 300 <= code < 400:
            return Outcome(code, "redirect not followed", False, False)
        return Outcome(code, None, False, False)

    async def _send(self, alert: AlertRow, secret: AlertSecretRow, delivery: DeliveryRow) -> int:
        """One POST of the delivery's body to the checked address; its status code."""
        assert self._client is not None
        target = await resolve_target(alert.webhook_url, self.resolve, self.allow_private)
        body = delivery.body.encode()
        headers = {
            "host": target.host_header,
            "content-type": "application/json",
            "user-agent": USER_AGENT,
            **signing.headers(
                secret.signing_secrets(self.clock()), delivery.id, int(self.wall()), body
            ),
        }
        extensions = {"sni_hostname": target.sni_hostname} if target.sni_hostname else {}
        request = self._client.build_request(
            "POST", target.url, content=body, headers=headers, extensions=extensions
        )
        response = await self._client.send(request, stream=True, follow_redirects=False)
        try:
            read = 0
            async for chunk in response.aiter_raw():
                read += len(chunk)
                if read >= BODY_LIMIT:
                    break  # the status is what counts; a 10 MB answer is not read
        finally:
            await response.aclose()
        return response.status_code
