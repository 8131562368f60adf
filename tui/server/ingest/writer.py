"""The service's own writer thread of ingested spans, behind a bounded queue: it writes while
no worker process does (ingest.processes: with `--ingest-processes 0`, while the pool starts,
and while a broken pool is replaced); the 1 to 4 worker processes otherwise write whole bodies
beside it, each in a transaction of its own.

Requests decode and map their spans in parallel, then hand them here and wait for the commit,
so a trace is right (and listable) when its request is answered. The service's ingest
transactions go through this one thread, so they never fight each other for SQLite's write lock
(the workers take turns with them under the write lock); and what queued while a transaction ran
is written together in the next one (group commit), up to GROUP_SPANS spans, which is how the
writer keeps up when requests come faster than one transaction each. The queue is bounded by
the spans it holds: past MAX_PENDING_SPANS a request is refused with Overloaded (the route
answers 503 with Retry-After, which OTLP exporters retry) instead of growing the memory.
If a grouped transaction fails, each request of the group is written alone, so one bad batch
fails only its own request.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from tui.server.store.protocol import TraceStore
from tui.server.store.rows import SpanGroup

log = logging.getLogger("tracetui.server")

MAX_PENDING_SPANS = 50_000
GROUP_SPANS = 4096


class Overloaded(Exception):
    """The writer's queue is full: try again shortly."""


@dataclass
class QueuedWrite:
    """One request's spans, waiting for the writer; `done` is set once they are committed."""

    groups: Sequence[SpanGroup]
    spans: int
    done: Future[None] = field(default_factory=Future)


class IngestWriter:
    """Writes jobs in its own daemon thread, between start() and stop()."""

    def __init__(
        self,
        store: TraceStore,
        max_pending_spans: int = MAX_PENDING_SPANS,
        group_spans: int = GROUP_SPANS,
    ) -> None:
        self.store = store
        self.max_pending_spans = max_pending_spans
        self.group_spans = group_spans
        self._queue: queue.SimpleQueue[QueuedWrite | None] = queue.SimpleQueue()
        self._pending = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="tracetui-ingest", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Write what is queued, then end the thread (waiting up to `timeout` seconds)."""
        if self._thread is None:
            return
        self._queue.put(None)
        self._thread.join(timeout)
        self._thread = None

    def submit(self, groups: Sequence[SpanGroup]) -> Future[None]:
        """Queue `groups` (one request's); the future is done once they are committed, or
        fails as the store refused them (StoreBusy). Raises Overloaded when the queue holds too many spans already (an empty queue takes
        any request, however big: the body limit bounds it)."""
        spans = sum(len(g.spans) for g in groups)
        with self._lock:
            if self._thread is None:
                raise Overloaded("the ingest writer is not running")
            if self._pending and self._pending + spans > self.max_pending_spans:
                raise Overloaded("the ingest queue is full")
            self._pending += spans
        job = QueuedWrite(groups, spans)
        self._queue.put(job)
        return job.done

    def _run(self) -> None:
        stopping = False
        while not stopping:
            job = self._queue.get()
            if job is None:
                break
            jobs, size = [job], job.spans
            while size < self.group_spans:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stopping = True
                    break
                jobs.append(more)
                size += more.spans
            self._write(jobs)

    def _write(self, jobs: list[QueuedWrite]) -> None:
        try:
            self.store.ingest([job.groups for job in jobs])
        except Exception as error:
            if len(jobs) > 1:
                for job in jobs:
                    self._write([job])
                return
            # By type only: an SQLite message can quote the data it choked on.
            log.warning("ingest: a batch failed (%s)", type(error).__name__)
            self._settle(jobs[0], error=error)
            return
        for job in jobs:
            self._settle(job)

    def _settle(self, job: QueuedWrite, error: Exception | None = None) -> None:
        with self._lock:
            self._pending -= job.spans
        if error is None:
            job.done.set_result(None)
        else:
            job.done.set_exception(error)
