"""The walk of docs/usage.md's "Verifying a webhook signature", run as written: both of its
Python snippets (standardwebhooks, and plain hmac/base64) verify a real delivery with the secret
the service showed, verify one with the previous secret during the grace period after a new
one, and refuse a body that was changed on the way."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks import WebhookVerificationError

from tests.support.webhooks import Clock, api, create_alert, new_store, receiving, service

USAGE = Path(__file__).resolve().parents[2] / "docs" / "usage.md"
P = "proj_alerts"


def snippets() -> list[str]:
    """The Python blocks of the section, in order."""
    text = USAGE.read_text()
    section = text[text.index("### Verifying a webhook signature") :]
    section = section[: section.index("\n## ")]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def checks(monkeypatch: pytest.MonkeyPatch, secret: str) -> list[Callable[..., Any]]:
    """The two snippets' functions, reading `secret` as the docs say (WEBHOOK_SECRET)."""
    monkeypatch.setenv("WEBHOOK_SECRET", secret)
    found = []
    for code, name in zip(snippets(), ("event_of", "verified"), strict=True):
        scope: dict[str, Any] = {}
        exec(compile(code, str(USAGE), "exec"), scope)  # noqa: S102  # the docs, run as written
        found.append(scope[name])
    return found


def test_both_snippets_verify_a_real_delivery_and_refuse_a_changed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = new_store(tmp_path / "verify.sqlite3")
    with receiving() as receiver, service(store, Clock()) as running, api(running) as client:
        alert = create_alert(client, P, receiver)
        first_secret = alert["webhook_secret"]
        client.post(f"projects/{P}/alerts/{alert['id']}/test", params={"wait": "true"})
        rotated = client.post(f"projects/{P}/alerts/{alert['id']}/rotate-secret").json()
        client.post(f"projects/{P}/alerts/{alert['id']}/test", params={"wait": "true"})
        before, after = receiver.wait_for(2)

    event_of, verified = checks(monkeypatch, first_secret)
    assert event_of(before.headers, before.body)["type"] == "alert.test"
    assert verified(before.headers, before.body)
    # The grace period: a receiver still on the first secret verifies the next delivery.
    assert event_of(after.headers, after.body)["type"] == "alert.test"
    assert verified(after.headers, after.body)
    changed = before.body.replace(b"alert.test", b"alert.fake")
    assert not verified(before.headers, changed)
    with pytest.raises(WebhookVerificationError):
        event_of(before.headers, changed)

    event_of, verified = checks(monkeypatch, rotated["secret"])
    assert verified(after.headers, after.body) and event_of(after.headers, after.body)
    assert not verified(before.headers, before.body)  # signed before the new secret existed
