"""The service's background tasks: started and stopped with the service, bounded, never in the
way of a request; and the first of them, which forgets Idempotency-Keys after a day."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import httpx
import pytest

from tui.demo.data import DemoKeys, populate
from tui.server.background import (
    IDEMPOTENCY_TTL_MS,
    Background,
    PeriodicTask,
    forget_old_responses,
)
from tui.server.run import LocalService
from tui.server.store.rows import now_ms
from tui.server.store.sqlite.store import Store


def wait_until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.005)


class Rounds:
    """A task's round that counts its calls, failing or blocking when told to."""

    def __init__(self, fail: Callable[[int], bool] = lambda n: False) -> None:
        self.calls = 0
        self.fail = fail
        self.release = threading.Event()
        self.release.set()
        self.entered = threading.Event()

    def __call__(self) -> None:
        self.calls += 1
        self.entered.set()
        self.release.wait(30)
        if self.fail(self.calls):
            raise RuntimeError("secret-in-the-message tt_ws_leak")


def running_service(
    tmp_path: Path, tasks: Sequence[PeriodicTask] | None
) -> tuple[LocalService, DemoKeys]:
    store = Store(tmp_path / "background.sqlite3")
    keys = populate(store, seed=7, scale=0.01, big_traces=False)
    return LocalService(store, tasks=tasks).start(), keys


@pytest.fixture
def stoppable() -> Iterator[list[LocalService]]:
    """Services a test started; stopped at the end even if the test failed half-way."""
    services: list[LocalService] = []
    yield services
    for service in services:
        service.stop()


def test_tasks_start_with_the_service_and_stop_with_it(
    tmp_path: Path, stoppable: list[LocalService]
) -> None:
    rounds = Rounds()
    service, _ = running_service(tmp_path, [PeriodicTask("count", 0.01, rounds)])
    stoppable.append(service)
    background: Background = service.app.state.background
    assert background.running() == ["count"]
    wait_until(lambda: rounds.calls >= 3)  # periodic: round after round

    service.stop()

    assert service.wait(timeout=0), "the service's thread is still alive"
    assert background.running() == []
    calls = rounds.calls
    time.sleep(0.1)  # ten periods
    assert rounds.calls == calls


def test_a_failing_round_is_logged_by_type_and_the_task_goes_on(
    tmp_path: Path, stoppable: list[LocalService], caplog: pytest.LogCaptureFixture
) -> None:
    rounds = Rounds(fail=lambda n: n % 2 == 1)  # rounds 1, 3, 5 ... raise
    with caplog.at_level(logging.WARNING, logger="tracetui.server"):
        service, _ = running_service(tmp_path, [PeriodicTask("flaky", 0.01, rounds)])
        stoppable.append(service)
        wait_until(lambda: rounds.calls >= 4)
        assert service.app.state.background.running() == ["flaky"]
    failures = [r.getMessage() for r in caplog.records if "flaky" in r.getMessage()]
    assert failures and all("RuntimeError" in m for m in failures)
    assert "secret-in-the-message" not in caplog.text and "tt_ws_leak" not in caplog.text


def test_a_slow_round_never_holds_up_a_request(
    tmp_path: Path, stoppable: list[LocalService]
) -> None:
    rounds = Rounds()
    rounds.release.clear()  # the round blocks, as a long SQLite write would
    service, keys = running_service(tmp_path, [PeriodicTask("slow", 60, rounds)])
    stoppable.append(service)
    try:
        assert rounds.entered.wait(10)
        response = httpx.get(
            f"{service.base_url}/projects",
            headers={"Authorization": f"Bearer {keys.workspace}"},
            timeout=5,
        )
        assert response.status_code == 200
    finally:
        rounds.release.set()


def test_stop_waits_for_a_round_then_gives_up_on_a_stuck_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    finishing, stuck = Rounds(), Rounds()
    finishing.release.clear()
    stuck.release.clear()

    async def scenario() -> tuple[bool, list[str]]:
        background = Background(
            [PeriodicTask("finishing", 60, finishing), PeriodicTask("stuck", 60, stuck)],
            stop_timeout_s=0.3,
        )
        await background.start()
        for rounds in (finishing, stuck):
            assert await asyncio.to_thread(rounds.entered.wait, 10)
        # "finishing" ends its round during the stop; "stuck" never does.
        threading.Timer(0.1, finishing.release.set).start()
        await background.stop()
        return finishing.release.is_set(), background.running()

    started = time.monotonic()
    try:
        with caplog.at_level(logging.WARNING, logger="tracetui.server"):
            finished, running = asyncio.run(scenario())
        # The whole event loop ends too: nothing joins the abandoned round's thread.
        elapsed = time.monotonic() - started
    finally:
        stuck.release.set()
    assert finished and running == []
    assert 0.3 <= elapsed < 5
    assert "stuck still in a round" in caplog.text and "finishing still" not in caplog.text


def test_remembered_answers_are_forgotten_after_a_day(
    tmp_path: Path, stoppable: list[LocalService]
) -> None:
    clock = [now_ms()]
    store = Store(tmp_path / "idempotency.sqlite3")
    keys = populate(store, seed=7, scale=0.01, big_traces=False)
    forget = forget_old_responses(store, clock=lambda: clock[0])
    service = LocalService(store, tasks=[forget]).start()
    stoppable.append(service)
    key = {"Idempotency-Key": uuid.uuid4().hex}
    with httpx.Client(
        base_url=service.base_url + "/", headers={"Authorization": f"Bearer {keys.workspace}"}
    ) as api:
        first = api.post("projects", json={"name": "a"}, headers=key)
        assert first.status_code == 201
        assert api.post("projects", json={"name": "b"}, headers=key).status_code == 409

        clock[0] += IDEMPOTENCY_TTL_MS - 60_000  # a minute short of a day: still remembered
        forget.round()
        again = api.post("projects", json={"name": "a"}, headers=key)
        assert again.headers.get("Idempotent-Replayed") == "true"
        assert again.json()["id"] == first.json()["id"]
        assert api.post("projects", json={"name": "b"}, headers=key).status_code == 409

        clock[0] += 2 * 60_000  # a minute past a day: forgotten, the key is free again
        forget.round()
        assert store.count("idempotency") == 0
        fresh = api.post("projects", json={"name": "b"}, headers=key)
        assert fresh.status_code == 201 and fresh.json()["id"] != first.json()["id"]
        assert "Idempotent-Replayed" not in fresh.headers


def test_the_service_forgets_old_keys_by_default(
    tmp_path: Path, stoppable: list[LocalService]
) -> None:
    store = Store(tmp_path / "default.sqlite3")
    populate(store, seed=7, scale=0.01, big_traces=False)
    week_ago = now_ms() - 7 * 86_400_000
    store.keep_response("kh", "fresh", "rh", 201, {"id": "x"})
    with store.transaction() as db:
        db.execute(
            "INSERT INTO idempotency (key_hash, idempotency_key, request_hash, status, body,"
            " created_at) VALUES ('kh', 'stale', 'rh', 201, '{}', ?)",
            (week_ago,),
        )
    service = LocalService(store).start()
    stoppable.append(service)
    tasks = service.app.state.background.tasks
    names = [
        "checkpoint-log",
        "index-texts",
        "forget-idempotency-keys",
        "expire-old-traces",
        "forget-alert-history",
    ]
    assert [t.name for t in tasks] == names  # and no evaluation: LocalService's default
    wait_until(lambda: store.count("idempotency") == 1)  # the first round runs at start
    assert store.recall_response("kh", "fresh") is not None
    assert store.recall_response("kh", "stale") is None
