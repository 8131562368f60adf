"""Bulk annotation (tui/api/annotation_batches.py) against the contract's MockTransport server:
one POST per 1,000 under a key of its own, a batch whose outcome is unknown looked up before it
is sent again (and not sent when it was stored), a failed one sent again under its key."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.client.fake_annotations import PROJECT, FakeAnnotations
from tests.support.helpers import mock_client
from tui.api.annotation_batches import BatchedWrite, Values
from tui.api.annotation_records import AnnotationTarget
from tui.api.errors import ServerError, TimedOut, ValidationFailed

IDS = [f"{n:032x}" for n in range(2_500)]
VERDICT = Values("correctness", "wrong", 0.0)


def server() -> FakeAnnotations:
    return FakeAnnotations(traces={trace_id: set() for trace_id in IDS})


def posts(fake: FakeAnnotations) -> list[httpx.Request]:
    return [r for r in fake.requests if r.method == "POST"]


async def test_every_thousand_is_one_post_under_a_key_of_its_own() -> None:
    fake = server()
    write = BatchedWrite(PROJECT, [AnnotationTarget.trace(t) for t in IDS])
    seen: list[int] = []
    async with mock_client(fake) as client:
        await write.run(client, VERDICT, lambda w: seen.append(w.targets_stored))
    sent = posts(fake)
    assert [len(json.loads(r.content)["data"]) for r in sent] == [1000, 1000, 500]
    assert len({r.headers["idempotency-key"] for r in sent}) == 3
    assert seen == [1000, 2000, 2500] and write.done
    assert {r["identifier"] for r in fake.records.values()} == {write.identifier}
    assert len(fake.records) == 2_500


async def test_a_batch_of_unknown_outcome_is_looked_for_and_never_sent_twice() -> None:
    fake = server()
    write = BatchedWrite(PROJECT, [AnnotationTarget.trace(t) for t in IDS])
    posted = 0

    def timeout_on_second(request: httpx.Request) -> httpx.Response:
        nonlocal posted
        if request.method == "POST":
            posted += 1
            if posted == 2:  # stored, then no answer: the client cannot know
                fake.store_then = httpx.ReadTimeout("no answer after sending")
        return fake(request)

    async with mock_client(timeout_on_second) as client:
        with pytest.raises(TimedOut):
            await write.run(client, VERDICT)
        assert (write.stored, write.unknown) == (1, True)
        await write.run(client, VERDICT)
    firsts = [json.loads(r.content)["data"][0]["trace_id"] for r in posts(fake)]
    assert firsts == [IDS[0], IDS[1000], IDS[2000]]  # the second looked up, not sent again
    assert len(fake.records) == 2_500 and write.done


async def test_a_failed_batch_is_sent_again_under_its_key_and_a_changed_one_under_a_new_one() -> (
    None
):
    fake = server()
    write = BatchedWrite(PROJECT, [AnnotationTarget.trace(t) for t in IDS[:1500]])
    fake.fail_next = httpx.Response(422, json={"error": {"message": "no"}})
    async with mock_client(fake) as client:
        with pytest.raises(ValidationFailed):
            await write.run(client, VERDICT)
        assert (write.stored, write.unknown) == (0, False)
        fake.fail_next = None
        await write.run(client, VERDICT)
    first, resent, last = posts(fake)
    assert first.headers["idempotency-key"] == resent.headers["idempotency-key"]
    assert last.headers["idempotency-key"] != first.headers["idempotency-key"]

    fake = server()
    write = BatchedWrite(PROJECT, [AnnotationTarget.trace(t) for t in IDS[:1500]])
    async with mock_client(fake) as client:
        fake.fail_next = httpx.Response(503, json={"error": {"message": "busy"}})
        with pytest.raises(ServerError):
            await write.run(client, VERDICT)
        assert write.unknown  # a 5xx to a POST: it may have been carried out
        await write.run(client, Values("correctness", "right", 1.0))
    looks = [r for r in fake.requests if r.method == "GET" and "annotations" in r.url.path]
    assert looks and looks[0].url.params["trace_id"] == IDS[0]
    keys = [r.headers["idempotency-key"] for r in posts(fake)]
    assert len(set(keys)) == 3  # the changed values are another write: new keys
    assert {r["label"] for r in fake.records.values()} == {"right"}
