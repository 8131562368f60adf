"""Searches cannot take the service from other keys (issue 39, point 1), on both stores: a search
past its time budget is stopped and answered 422 `query_timeout`; a search whose client leaves
is cancelled at once (PostgreSQL: its backend's statement ends, seen in pg_stat_activity); a key
at its bound of searches under way gets 429, every key 503 once all places are taken, both with
Retry-After; and other keys' requests are answered meanwhile.

A search is made long without a clock: on PostgreSQL it waits for a lock the test holds on the
traces table (it would wait its whole budget, or for ever before the budget existed); on SQLite
it is a 64-character word over texts made to cost FTS5 milliseconds per trace (seconds in all:
a cancelled search is told from a finished one by the service's count of searches its client
left, never by how long it took). Every wait is on a condition, with a generous deadline.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import psycopg
import pytest

from tests.support.service import local_service, wait_for
from tui.server.api_keys import hash_key, new_api_key
from tui.server.http.searches import SearchLimits
from tui.server.run import LocalService
from tui.server.store.opening import open_store
from tui.server.store.rows import TraceRow

NOW = 1_795_000_000_000
# FTS5 checks the word's 62 trigrams at each of the text's ~7,600 positions of "aaa": some
# milliseconds per trace, and the word is never found.
SLOW_TEXT = ("a" * 61 + "b") * 129
SLOW_WORD = "a" * 63 + "b"
SLOW_TRACES = 1_000
WINDOW = {"from": "2026-11-01T00:00:00Z", "to": "2027-01-01T00:00:00Z"}  # holds NOW
SEARCH = {"project_id": "slow", "q": SLOW_WORD, **WINDOW}
# What the PostgreSQL search's statements hold, and nothing else does.
MARKER = "strpos(lower(search_text)"


@pytest.fixture
def database(fresh_database: str) -> Iterator[Any]:
    """A store over a new database of the module's backend: the project "slow" (SLOW_TRACES
    traces of SLOW_TEXT) and "other" (one trace); closed at the end."""
    store = open_store(fresh_database)
    rows = [trace_row("slow", f"{n:032x}") for n in range(SLOW_TRACES)]
    with store.transaction() as db:
        store.insert_project(db, "slow", None, 3650, project_id="slow")
        store.insert_project(db, "other", None, 3650, project_id="other")
        store.insert_traces(db, rows, texts=[("slow", r.id, SLOW_TEXT) for r in rows])
        store.insert_traces(db, [trace_row("other", "f" * 32)], texts=[("other", "f" * 32, "hi")])
    yield store
    store.close()


def trace_row(project: str, trace_id: str) -> TraceRow:
    fields = (trace_id, project, "t", NOW, 1, 1, 0, 0, 0.0, "ok", 0, "{}", NOW, None)
    return TraceRow(*fields, None, None, "[]", None, "[]")


@contextmanager
def serving(store: Any, **config: Any) -> Iterator[tuple[LocalService, list[str]]]:
    """The service over `store` with `config`, and three workspace keys of its own."""
    keys = [new_api_key("ws") for _ in range(3)]
    for n, key in enumerate(keys):
        store.add_key(key, None, f"searcher-{n}")
    service = local_service(store, rate_limit=100_000, **config).start()
    try:
        yield service, keys
    finally:
        service.stop()


def client(service: LocalService, key: str) -> httpx.Client:
    return httpx.Client(
        base_url=service.base_url + "/", headers={"Authorization": f"Bearer {key}"}, timeout=120
    )


def limits(service: LocalService) -> SearchLimits:
    found: SearchLimits = service.app.state.searches
    return found


def send(service: LocalService, key: str, params: dict[str, str] = SEARCH) -> socket.socket:
    """A search sent on a socket of its own, not read: closing the socket is its client
    leaving."""
    address = urlsplit(service.base_url)
    sock = socket.create_connection((address.hostname, address.port))
    sock.sendall(
        f"GET /v1/traces?{urlencode(params)} HTTP/1.1\r\nHost: {address.hostname}\r\n"
        f"Authorization: Bearer {key}\r\n\r\n".encode()
    )
    return sock


def leave(sock: socket.socket) -> None:
    """The client leaves: its end of the connection shut (FIN), also while a thread reads."""
    sock.shutdown(socket.SHUT_RDWR)
    sock.close()


def searching(service: LocalService, key: str) -> int:
    return limits(service).running.get(hash_key(key), 0)


@contextmanager
def traces_locked(backend: str, url: str) -> Iterator[None]:
    """PostgreSQL: the traces table held (ACCESS EXCLUSIVE) by another session while inside, so
    that a search waits; SQLite: nothing (its searches take long by themselves)."""
    if backend == "sqlite":
        yield
        return
    with psycopg.connect(url) as holder:
        holder.execute("LOCK TABLE traces IN ACCESS EXCLUSIVE MODE")
        yield
        holder.rollback()


def waiting_searches(url: str) -> int:
    """PostgreSQL: the search statements running now (waiting on the lock or reading)."""
    with psycopg.connect(url, autocommit=True) as watcher:
        row = watcher.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active'"
            " AND pid <> pg_backend_pid() AND position(%s in query) > 0",
            (MARKER,),
        ).fetchone()
    return int(row[0]) if row else 0


def test_a_search_past_its_budget_is_answered_422_query_timeout(
    api_backend: str, fresh_database: str, database: Any
) -> None:
    with (
        serving(database, query_timeout_s=0.2) as (service, keys),
        traces_locked(api_backend, fresh_database),
        client(service, keys[0]) as api,
    ):
        answer = api.get("traces", params=SEARCH)
        assert answer.status_code == 422, answer.text
        error = answer.json()["error"]
        assert error["code"] == "query_timeout" and "0.2 s" in error["message"]
        assert limits(service).timed_out == 1 and limits(service).total == 0
        if api_backend == "postgres":
            wait_for(lambda: waiting_searches(fresh_database) == 0, what="the statement to end")
        # The service answers on: the project list, and (PostgreSQL) a page of traces once
        # the lock is gone.
        assert api.get("projects").status_code == 200
    with serving(database) as (service, keys), client(service, keys[0]) as api:
        listed = api.get("traces", params={"project_id": "other", **WINDOW})
        assert [t["id"] for t in listed.json()["data"]] == ["f" * 32]


def test_a_search_whose_client_leaves_is_cancelled_at_once(
    api_backend: str, fresh_database: str, database: Any
) -> None:
    """The budget is 10 minutes, so only the cancel can end the search within the wait."""
    with (
        serving(database, query_timeout_s=600) as (service, keys),
        traces_locked(api_backend, fresh_database),
    ):
        sock = send(service, keys[0])
        wait_for(lambda: searching(service, keys[0]) == 1, what="the search to start")
        if api_backend == "postgres":
            wait_for(lambda: waiting_searches(fresh_database) == 1, what="its statement")
        leave(sock)
        wait_for(lambda: limits(service).client_left == 1, what="the search to be cancelled")
        assert limits(service).total == 0 and limits(service).timed_out == 0
        if api_backend == "postgres":
            wait_for(lambda: waiting_searches(fresh_database) == 0, what="the statement to end")


def test_a_word_longer_than_the_bound_is_refused(
    api_backend: str, fresh_database: str, database: Any
) -> None:
    """A word's (or quoted phrase's) cost per trace grows with its length: 64 at most."""
    with serving(database) as (service, keys), client(service, keys[0]) as api:
        for q in ("a" * 65, f'"{"a " * 32}b"', f"refund {'x' * 65}"):
            answer = api.get("traces", params={**SEARCH, "q": q})
            assert answer.status_code == 422, answer.text
            assert answer.json()["error"]["details"][0]["field"] == "q"
        longest = api.get("traces", params={"project_id": "other", "q": "x" * 64, **WINDOW})
        assert longest.status_code == 200, longest.text


def test_one_key_at_its_bound_leaves_the_service_to_the_others(
    api_backend: str, fresh_database: str, database: Any
) -> None:
    """Key 0 runs its two searches, key 1 takes the last place: key 0's third search gets
    429, key 2's search 503, both with Retry-After; key 2's other requests are answered."""
    bounds = {"searches_per_key": 2, "searches_per_project": 4, "searches": 3}
    bounds["query_timeout_s"] = 600
    with (
        serving(database, **bounds) as (service, keys),
        traces_locked(api_backend, fresh_database),
    ):
        running = [send(service, keys[0]), send(service, keys[0]), send(service, keys[1])]
        wait_for(lambda: limits(service).total == 3, what="three searches under way")
        with client(service, keys[0]) as first, client(service, keys[2]) as third:
            refused = first.get("traces", params=SEARCH)
            assert refused.status_code == 429, refused.text
            assert refused.json()["error"]["code"] == "too_many_searches"
            assert refused.headers["Retry-After"] == "1"
            # A project's sessions and users are searches too.
            for listing in ("projects/other/sessions", "projects/other/users"):
                assert first.get(listing, params=WINDOW).status_code == 429
            busy = third.get("traces", params=SEARCH)
            assert busy.status_code == 503, busy.text
            assert busy.json()["error"]["code"] == "searches_busy"
            assert busy.headers["Retry-After"] == "1"
            assert third.get("projects").status_code == 200
            assert third.get("projects/other/alerts").status_code == 200
            if api_backend == "sqlite":  # PostgreSQL's traces are locked for everyone here
                listed = third.get("traces", params={"project_id": "other", **WINDOW})
                assert [t["id"] for t in listed.json()["data"]] == ["f" * 32]
        assert limits(service).total == 3  # the three went on meanwhile
        for sock in running:
            leave(sock)
        wait_for(lambda: limits(service).total == 0, what="the searches to be cancelled")


# PostgreSQL's pool only: SQLite's connections are one per thread.
@pytest.mark.parametrize("api_backend", ["postgres"])
def test_many_searches_of_one_key_leave_the_pool_to_other_keys(
    api_backend: str, fresh_database: str, database: Any
) -> None:
    """PostgreSQL: twelve searches of one key at once (the pool has 10 connections): three run,
    nine are refused at once, and another key's request finds a connection. Without a bound
    the twelve held the pool, and the other key's request was 503 after the pool's wait."""
    answers: list[int] = []
    with (
        serving(database, query_timeout_s=600) as (service, keys),
        traces_locked(api_backend, fresh_database),
    ):
        sockets = [send(service, keys[0]) for _ in range(12)]

        def answered(sock: socket.socket) -> None:
            head = sock.recv(64)
            if head:
                answers.append(int(head.split()[1]))

        readers = [threading.Thread(target=answered, args=(s,), daemon=True) for s in sockets]
        for reader in readers:
            reader.start()
        wait_for(
            lambda: len(answers) == 9 and waiting_searches(fresh_database) == 3,
            what="three searches running and nine refused",
        )
        assert answers == [429] * 9
        with client(service, keys[1]) as other:
            assert other.get("projects").status_code == 200
            assert other.get("projects/other").status_code == 200
        for sock in sockets:
            leave(sock)
        wait_for(lambda: limits(service).total == 0, what="the searches to be cancelled")


def test_two_keys_of_one_project_take_no_more_than_the_projects_places(
    api_backend: str, fresh_database: str, database: Any
) -> None:
    """The attack repeated after the fixes (docs/benchmarks.md): with its searches spread over
    two keys, one project held every place of the replica and the others' searches got 503.
    Now the project's keys together take `searches_per_project` places: its next search is
    429 whichever key sends it, and another project's search finds a place."""
    bounds = {"searches_per_key": 2, "searches_per_project": 2, "searches": 3}
    bounds["query_timeout_s"] = 600
    with (
        serving(database, **bounds) as (service, keys),
        traces_locked(api_backend, fresh_database),
    ):
        running = [send(service, keys[0]), send(service, keys[1])]
        wait_for(lambda: limits(service).total == 2, what="two searches of the project")
        with client(service, keys[1]) as second:
            refused = second.get("traces", params=SEARCH)
            assert refused.status_code == 429, refused.text
            assert refused.json()["error"]["code"] == "too_many_searches"
            assert "project" in refused.json()["error"]["message"]
            assert refused.headers["Retry-After"] == "1"
        other = {**SEARCH, "project_id": "other"}
        if api_backend == "sqlite":  # its one trace is read at once
            with client(service, keys[2]) as third:
                assert third.get("traces", params=other).status_code == 200
        else:  # the traces are locked for everyone: it holds the last place, waiting
            running.append(send(service, keys[2], other))
            wait_for(
                lambda: limits(service).by_project.get("other") == 1,
                what="another project's search to take the last place",
            )
        for sock in running:
            leave(sock)
        wait_for(lambda: limits(service).total == 0, what="the searches to be cancelled")
