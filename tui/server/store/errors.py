"""What a store raises that its callers answer: a write refused for now (StoreBusy,
StoreUnavailable: 503 with Retry-After), a database that cannot be opened (StoreUnreachable) or
was written by a newer tracetui (SchemaTooNew), a project name taken (NameTaken: 409), a project
with as many alerts as it may have (TooManyAlerts: 409), and a change whose Idempotency-Key was
answered before (AlreadyAnswered: the first answer again)."""

from __future__ import annotations

from tui.server.store.rows import Remembered


class StoreBusy(Exception):
    """The store stayed locked by other writers longer than it waits: try again shortly (the
    service answers 503 with Retry-After, which OTLP exporters and the app retry)."""


class StoreUnavailable(StoreBusy):
    """The store cannot write for now (its disk is full, read-only or failing; its server
    unreachable): the write is undone whole, reads go on where they can, and writes succeed
    again once it can write (503, retried)."""


class StoreUnreachable(Exception):
    """The store could not be opened at all (its server is down, refuses the login, or the
    database does not exist): `tracetui serve` and `tracetui keys` print the message, one line
    that names no secret, and exit non-zero."""


class SchemaTooNew(RuntimeError):
    """The database was written by a newer tracetui than this one."""


class NameTaken(Exception):
    """Another project has this name: two projects of one name could not be told apart in a
    list, a palette or an ingest routed by name."""


class TooManyAlerts(Exception):
    """The project has `most` alerts already, as many as it may have (--alerts-per-project):
    nothing was created."""

    def __init__(self, most: int) -> None:
        super().__init__(f"the project has {most} alerts, as many as it may have")
        self.most = most


class AlreadyAnswered(Exception):
    """The change's Idempotency-Key has an answer (a repeat, maybe racing the first): nothing
    was changed again, and `seen` is the first answer."""

    def __init__(self, seen: Remembered) -> None:
        super().__init__("this Idempotency-Key was answered before")
        self.seen = seen
