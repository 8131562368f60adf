"""A webhook target that every delivery would refuse is refused when the alert is created: 422
on `webhook_url`, in each way of writing a private, loopback, link-local or metadata address
(IPv4 inside IPv6 included) and behind a name that resolves to one. With
--allow-private-webhooks only the metadata addresses are. A name is still checked again before
every attempt: one that resolved to a public address at creation and to a private one later
(DNS rebinding) gets nothing."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from tests.support.webhooks import Clock, api, events, new_store, receiving, service, wait_until

P = "proj_alerts"
ALERT = {"name": "alert", "metric": "latency_ms_5m", "condition": "gt", "threshold": 1000}
SECRET_PATH = "/services/T0SECRET/B0SECRET/xoxb-path-is-a-secret"
HINT_WORDS = "--allow-private-webhooks"

NAMES = {
    "localhost": ["127.0.0.1"],
    "intranet.acme-corp.io": ["10.1.2.3"],
    "mixed.acme-corp.io": ["93.184.215.14", "192.168.1.9"],
    "metadata.acme-corp.io": ["169.254.169.254"],
    "hooks.acme-corp.io": ["93.184.215.14"],
}

# (host as written in the URL, what the refusal says)
PRIVATE = [
    ("127.0.0.1", "loopback"),
    ("[::1]", "loopback"),
    ("[::ffff:127.0.0.1]", "loopback"),  # IPv4-mapped
    ("[::ffff:0:7f00:1]", "loopback"),  # IPv4-translated (SIIT)
    ("[::127.0.0.1]", "loopback"),  # IPv4-compatible
    ("[2002:7f00:1::]", "loopback"),  # 6to4
    ("[2001:0:4136:e378:8000:63bf:80ff:fffe]", "loopback"),  # Teredo, client 127.0.0.1
    ("[64:ff9b::10.0.0.1]", "private"),  # NAT64
    ("[64:ff9b:1::c0a8:101]", "private"),  # NAT64, local-use prefix
    ("10.0.0.1", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("[fc00::1]", "private"),
    ("169.254.1.1", "link-local"),
    ("[fe80::1]", "link-local"),
    ("0.0.0.0", "unspecified"),  # noqa: S104 - an address to refuse, not to bind
    ("[::]", "unspecified"),
    ("100.64.0.1", "non-public"),
    ("224.0.0.1", "multicast"),
    ("localhost", "loopback"),
    ("intranet.acme-corp.io", "private"),
    ("mixed.acme-corp.io", "private"),
]
METADATA = [
    "169.254.169.254",
    "169.254.170.2",
    "100.100.100.200",
    "[fd00:ec2::254]",
    "[::ffff:169.254.169.254]",
    "[::ffff:0:a9fe:a9fe]",
    "[::169.254.169.254]",
    "[2002:a9fe:a9fe::1]",
    "[2001:0:4136:e378:8000:63bf:5601:5601]",
    "[64:ff9b::169.254.169.254]",
    "[64:ff9b:1::a9fe:a9fe]",
    "metadata.acme-corp.io",
]


def resolver(
    names: dict[str, list[str]], asked: list[str] | None = None
) -> Callable[[str, int], Coroutine[Any, Any, list[str]]]:
    """A DNS stand-in that reads `names` at each look-up (a test may change it)."""

    async def resolve(host: str, port: int) -> list[str]:
        if asked is not None:
            asked.append(host)
        if host not in names:
            raise OSError("no such name")
        return names[host]

    return resolve


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A service without --allow-private-webhooks, and a client of it."""
    store = new_store(tmp_path_factory.mktemp("strict") / "strict.sqlite3")
    with (
        service(store, Clock(), allow_private_webhooks=False, resolve=resolver(NAMES)) as running,
        api(running) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def lenient(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A service with --allow-private-webhooks, and a client of it."""
    store = new_store(tmp_path_factory.mktemp("lenient") / "lenient.sqlite3")
    with (
        service(store, Clock(), allow_private_webhooks=True, resolve=resolver(NAMES)) as running,
        api(running) as client,
    ):
        yield client


def create(client: Any, url: str) -> Any:
    return client.post(f"projects/{P}/alerts", json={**ALERT, "webhook_url": url})


def assert_refused(answer: Any, *words: str) -> None:
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["code"] == "validation_error"
    assert [d["field"] for d in error["details"]] == ["webhook_url"]
    for word in words:
        assert word in error["message"] and word in error["details"][0]["message"], error
    # The URL's path can be a secret (Slack's, Discord's): never in the answer.
    assert "SECRET" not in answer.text and "xoxb" not in answer.text


@pytest.mark.parametrize(("host", "kind"), PRIVATE)
def test_a_private_target_is_refused_at_creation(strict: Any, host: str, kind: str) -> None:
    assert_refused(create(strict, f"https://{host}:8443{SECRET_PATH}"), kind, HINT_WORDS)


@pytest.mark.parametrize("host", METADATA)
def test_a_metadata_target_is_refused_at_creation_even_with_the_flag(
    strict: Any, lenient: Any, host: str
) -> None:
    for client in (strict, lenient):
        assert_refused(create(client, f"http://{host}{SECRET_PATH}"), "cloud metadata")


@pytest.mark.parametrize(("host", "kind"), PRIVATE)
def test_with_the_flag_private_targets_are_accepted(lenient: Any, host: str, kind: str) -> None:
    answer = create(lenient, f"https://{host}/hooks")
    assert answer.status_code == 201, answer.text


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.acme-corp.io/x",  # resolves to a public address
        "http://93.184.215.14/x",
        "http://[2606:4700::1111]/x",
        "http://[64:ff9b::93.184.215.14]/x",  # NAT64 of a public address
        "https://not-yet-in-dns.acme-corp.io/x",  # does not resolve yet: delivery retries
        "https://hooks.example.com/x",  # a reserved example name: never resolves, nothing sent
    ],
)
def test_public_unresolved_and_example_targets_are_accepted(strict: Any, url: str) -> None:
    answer = create(strict, url)
    assert answer.status_code == 201, answer.text


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://hooks.acme-corp.io/x", "http"),
        ("http://[::1/x", "webhook_url"),
        ("https://hooks.acme-corp.io:99999/x", "port"),
    ],
)
def test_urls_that_cannot_be_delivered_to_are_refused(strict: Any, url: str, words: str) -> None:
    answer = create(strict, url)
    assert answer.status_code == 422, answer.text
    assert [d["field"] for d in answer.json()["error"]["details"]] == ["webhook_url"]
    assert words in answer.text


def test_the_key_and_project_are_checked_before_the_name_is_resolved(tmp_path: Path) -> None:
    asked: list[str] = []
    store = new_store(tmp_path / "order.sqlite3")
    store.add_key("tt_other_project_key", "proj_other", "other project")
    with (
        service(store, Clock(), allow_private_webhooks=False, resolve=resolver(NAMES, asked)) as s,
        api(s) as client,
    ):
        body = {**ALERT, "webhook_url": "https://intranet.acme-corp.io/x"}
        stranger = client.post(
            f"projects/{P}/alerts",
            json=body,
            headers={"Authorization": "Bearer tt_other_project_key"},
        )
        missing = client.post("projects/proj_nowhere/alerts", json=body)
    assert stranger.status_code == 403 and missing.status_code == 404
    assert asked == []  # no look-up for a stranger: not even how a name resolves


def test_a_name_that_resolves_elsewhere_later_is_refused_at_delivery(tmp_path: Path) -> None:
    """DNS rebinding: public when the alert is created, private when the webhook is sent."""
    names = dict(NAMES)
    store = new_store(tmp_path / "rebinding.sqlite3")
    with (
        receiving() as receiver,
        service(store, Clock(), allow_private_webhooks=False, resolve=resolver(names)) as running,
        api(running) as client,
    ):
        port = receiver.url.split(":")[2].split("/")[0]
        names["rebound.acme-corp.io"] = ["93.184.215.14"]
        created = create(client, f"http://rebound.acme-corp.io:{port}/hooks/alerts")
        assert created.status_code == 201, created.text
        alert_id = created.json()["id"]
        names["rebound.acme-corp.io"] = ["127.0.0.1"]  # where the receiver really is
        assert client.post(f"projects/{P}/alerts/{alert_id}/test").status_code == 202

        def attempts() -> list[dict[str, Any]]:
            return [e for e in events(client, P, alert_id) if e["kind"] == "delivery"]

        wait_until(lambda: bool(attempts()), seconds=30)
        attempt = attempts()[0]
    assert receiver.received == []
    assert not attempt["ok"] and attempt["status_code"] is None
    assert attempt["error"].startswith("refused: rebound.acme-corp.io resolves to 127.0.0.1")
