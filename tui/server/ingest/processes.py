"""Ingest in worker processes: each decodes, maps and writes a whole body, beside the service.

Decoding and mapping a span is pure Python (~20-40 us each) and so is much of writing it, and
Python runs one thread at a time in a process. Done in the service's own threads (the writer
thread of ingest.writer), ingest and the API took turns: while ingesting at full speed the
trace list's p95 went from 9 to 106 ms, and the writer thread, which lets go of the
interpreter at every row SQLite stores, waited for it again behind the event loop each time.
So a body goes to a worker process that decodes, maps, sums and writes it in one transaction of
its own; the service keeps the HTTP, the key check and the reads. With two workers one decodes
while the other writes (SQLite's write lock takes turns between them; busy_timeout waits).
The request is answered after the worker's commit, so a trace is listable when its request
returns, as with the writer thread.

The pool starts in the background when the service starts (a worker imports protobuf, the store
and the price table: about a second on a small machine): until it is ready, and with
`processes=0`, a body is decoded in a thread and written by the writer thread, as before, so
the service answers at once and needs no pool to be right. A worker that dies (killed, out of
memory) breaks the pool, whose other workers are ended too: every request the pool held is
answered 503 with Retry-After (SQLite rolled back whatever was not committed, and a batch sent
again replaces itself, never counts twice: not retried here, in case the body is what killed
the worker), and a new pool is started, the writer thread serving meanwhile; a body that
comes once the pool is known broken goes to the writer thread at once. Workers ignore Ctrl-C and SIGTERM sent to the whole process group (a
terminal, systemd): the service ends them when it stops, after the bodies they hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import NamedTuple

from tui.server.backend import StoreBusy, TraceStore
from tui.server.ingest import otlp_json, otlp_proto
from tui.server.ingest.body import PROTOBUF
from tui.server.ingest.costs import PRICES, PriceBook
from tui.server.ingest.summaries import summarize
from tui.server.ingest.types import Decoded, Unreadable
from tui.server.rows import SpanGroup

log = logging.getLogger("tracetui.server")


class WorkerLost(Exception):
    """The worker process holding this body died: nothing of it was stored (or all of it was,
    if it died after its commit: sent again, the spans replace themselves)."""


class Outcome(NamedTuple):
    """What a worker tells the request: the spans refused, and the first reason."""

    rejected: int
    reason: str | None


def outcome_of(decoded: Decoded, refused: int) -> Outcome:
    """The answer to a body: what the decoder refused plus what the store refused."""
    reason = decoded.first_reason
    if refused and reason is None:
        reason = "a trace id is already used by another project"
    return Outcome(decoded.rejected + refused, reason)


def decode(media: str, body: bytes, prices: PriceBook, now_ms: int) -> Decoded:
    """Decode `body` of `media` type in this thread, and sum its traces (a new trace's row is
    its batch's sums: the writer only inserts them)."""
    if media == PROTOBUF:
        decoded = otlp_proto.decode(body, prices, now_ms)
    else:
        decoded = otlp_json.decode(body, prices, now_ms)
    decoded.drafts = [
        replace(draft, traces=summarize(draft.spans, draft.attributes), attributes=None)
        for draft in decoded.drafts
    ]
    return decoded


def groups_of(decoded: Decoded, project_id: str | None) -> list[SpanGroup]:
    """The decoded spans bound for a project key's project, or (None) for the one each
    resource names (a workspace key)."""
    return [
        SpanGroup(
            project_id,
            None if project_id else draft.project_name,
            draft.resource,
            draft.spans,
            draft.traces,
        )
        for draft in decoded.drafts
    ]


# -- in a worker process ------------------------------------------------------------------------

# As the service's background rounds (background.lower_priority). At 5, the trace list's p95
# while ingesting at full speed was 15-19.5 ms (idle: 5-6.5); at 10, 11.7-12.6 ms, with the
# same ingest speed (the workers get every cycle the service leaves).
WORKER_NICENESS = 10
_store: TraceStore | None = None  # the worker's own, on the service's (opened by start_worker)


def start_worker(open_store: Callable[[], TraceStore]) -> None:
    """Run once by each worker as it starts: it ends with the service, opens the database and
    loads the price table before the first body. Workers run at a lower priority than the
    service: a flood of spans must not slow the reads of someone triaging (nor the service's
    start: the workers load beside it); an idle machine gives them every spare cycle anyway."""
    global _store
    for ignored in (signal.SIGINT, signal.SIGTERM):
        signal.signal(ignored, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    threading.Thread(target=_exit_with_parent, name="tracetui-parent", daemon=True).start()
    _store = open_store()
    PRICES.warm()


def _exit_with_parent() -> None:
    """End this worker when the service's process ends, however it ended: a service killed
    (SIGKILL) never shuts its pool down, and a worker waiting on the pool's queue would wait
    for ever (it holds the queue's write end itself)."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)


class IngestFailed(Exception):
    """A worker's unforeseen error, by its type's name only: plain to send back to the service
    (any exception may not be), and no message that could quote the data it choked on."""


def ingest_in_worker(media: str, body: bytes, now_ms: int, project_id: str | None) -> Outcome:
    """Decode, map and write one body in this worker (one transaction). Raises Unreadable for a
    body that is not OTLP, StoreBusy when other writers held the store too long, IngestFailed
    for anything else."""
    try:
        return _ingest(media, body, now_ms, project_id)
    except (Unreadable, StoreBusy):
        raise
    except Exception as error:
        log.warning("ingest: a batch failed (%s)", type(error).__name__)
        raise IngestFailed(type(error).__name__) from None


def _ingest(media: str, body: bytes, now_ms: int, project_id: str | None) -> Outcome:
    assert _store is not None, "start_worker opens the store"
    decoded = decode(media, body, PRICES, now_ms)
    groups = groups_of(decoded, project_id)
    # Workers write in turns under SQLite's write lock (busy_timeout waits). A lock of the
    # pool's own, handed over without SQLite's sleeps, was slower (measured while a worker's
    # commit still ran checkpoints: now the service's background task does, Store.opener).
    refused = _store.ingest([groups])[0] if groups else 0
    return outcome_of(decoded, refused)


def worker_ready() -> bool:
    """A job that returns once a worker is up (start_worker has run in it)."""
    return _store is not None


# -- in the service -------------------------------------------------------------------------------


class IngestProcesses:
    """`processes` worker processes, each writing through a store `open_store` opens; 0 (or no
    opener: a store other processes cannot open) leaves ingest to the service's threads."""

    def __init__(
        self, processes: int = 0, open_store: Callable[[], TraceStore] | None = None
    ) -> None:
        self.processes = processes if open_store else 0
        self.open_store = open_store
        self._pool: ProcessPoolExecutor | None = None  # set once its workers are up
        self._lock = threading.Lock()
        self._stopped = False
        self.bodies = 0  # bodies ingested by worker processes (tests and logs read it)

    @property
    def ready(self) -> bool:
        """True while bodies go to worker processes."""
        return self._pool is not None

    def start(self) -> None:
        """Start the worker processes in the background (returns at once)."""
        if self.processes > 0 and self.open_store is not None:
            threading.Thread(
                target=self._start_pool,
                args=(self.open_store,),
                name="tracetui-ingest-pool",
                daemon=True,
            ).start()

    def _start_pool(self, open_store: Callable[[], TraceStore]) -> None:
        pool = ProcessPoolExecutor(
            self.processes,
            mp_context=multiprocessing.get_context("spawn"),  # fork copies no threads safely
            initializer=functools.partial(start_worker, open_store),
        )
        try:
            # Wait until workers are up (one job each, though a quick worker may take two).
            for up in [pool.submit(worker_ready) for _ in range(self.processes)]:
                up.result()
        except Exception as error:  # no processes here: ingest stays in the service's threads
            log.warning("ingest: worker processes did not start (%s)", type(error).__name__)
            pool.shutdown(wait=False, cancel_futures=True)
            return
        with self._lock:
            if self._stopped:
                pool.shutdown(wait=False, cancel_futures=True)
                return
            self._pool = pool

    def stop(self) -> None:
        """Let the workers finish what they hold, then end them."""
        with self._lock:
            self._stopped = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    async def ingest(
        self, media: str, body: bytes, now_ms: int, project_id: str | None
    ) -> Outcome | None:
        """Ingest `body` in a worker: its outcome, or None when no worker is ready (the caller
        ingests it in the service). Raises Unreadable for a body that is not OTLP, WorkerLost
        if the worker died holding it."""
        pool = self._pool
        if pool is None:
            return None
        try:
            job: Future[Outcome] = pool.submit(ingest_in_worker, media, body, now_ms, project_id)
        except (BrokenProcessPool, RuntimeError):  # broke while idle, or shut down: nothing sent
            self._replace(pool)
            return None
        try:
            outcome = await asyncio.wrap_future(job)
        except BrokenProcessPool:
            self._replace(pool)
            raise WorkerLost("an ingest worker process stopped") from None
        except Exception:
            raise
        except BaseException:  # a signal's exception in the worker, sent back as the result
            raise WorkerLost("an ingest worker process was interrupted") from None
        self.bodies += 1
        return outcome

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        """Let go of a broken pool (once, whichever request saw it first) and start another."""
        with self._lock:
            if self._pool is not broken:
                return
            self._pool = None
        log.warning("ingest: a worker process stopped; starting another pool")
        broken.shutdown(wait=False, cancel_futures=True)
        if not self._stopped:
            self.start()
