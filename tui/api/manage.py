"""Managing a project from the app: its keys, its settings, its alerts (pause, mute, edit,
delete, a new signing secret, a test event). Extensions of the spec that a server may offer or
not: each call first learns what the server offers (offers.py, once per source, from its
OpenAPI document) and, for an action it does not offer, raises NotOffered with a plain sentence
instead of sending a request that would 404.

Keys and secrets the server hands over are kept as secrets at once (models.SecretValue) and
scrubbed from anything the client logs or raises afterwards.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tui.api.delivery import DeliveryOutcome
from tui.api.envelopes import read_json, read_record
from tui.api.errors import (
    ApiError,
    BadResponse,
    ConnectionFailed,
    RateLimited,
    ServerError,
    TimedOut,
)
from tui.api.models import Alert, KeyInfo, ProjectChange, RotatedSecret
from tui.api.offers import NOTHING, Offers, key_offer, offers_from_document
from tui.api.params import iso, segment
from tui.api.source import TraceSource

if TYPE_CHECKING:
    import httpx

# Failures that say nothing about what the server offers: asked again next time.
PASSING_FAILURES = (ConnectionFailed, TimedOut, ServerError, RateLimited)


class ManageCalls(TraceSource):
    """The management calls, on top of the source that reads (the spec's: client.py)."""

    _offers_lock: asyncio.Lock | None = None  # made by the first discover_offers

    async def discover_offers(self) -> Offers:
        """Read the server's OpenAPI document once: a definite answer (the document, a 404,
        anything that is not one) is kept for the source's life; a passing failure (no
        connection, a 5xx, a rate limit) leaves it to the next call to ask again."""
        if self._offers is not None:
            return self._offers
        if self._offers_lock is None:
            self._offers_lock = asyncio.Lock()
        async with self._offers_lock:
            if self._offers is None:
                try:
                    response = await self.transport.request("GET", "openapi.json")
                    self._offers = offers_from_document(read_json(response))
                except PASSING_FAILURES:
                    return NOTHING
                except ApiError:  # 404, 401, an unreadable body: a server without them
                    self._offers = NOTHING
        return self._offers

    async def _require(self, offered: str, action: str) -> None:
        if not getattr(await self.discover_offers(), offered):
            raise self.not_offered(action)

    async def _write(
        self,
        method: str,
        url: str,
        body: Any = None,
        *,
        project_id: str | None = None,
        params: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> httpx.Response:
        return await self.transport.request(
            method,
            url,
            project_id=project_id,
            params=params,
            body=body,
            idempotency_key=idempotency_key or uuid.uuid4().hex,
        )

    def _remember(self, secret: Any) -> None:
        if secret is not None:
            self.transport.keys.remember(secret)

    # -- keys ------------------------------------------------------------------------------------

    @staticmethod
    def _keys_url(project_id: str | None) -> str:
        return f"projects/{segment(project_id)}/keys" if project_id else "keys"

    async def list_keys(self, project_id: str | None) -> list[KeyInfo]:
        """A project's keys (None: the workspace keys): never the keys themselves. The
        workspace key is used: a project key sees its own key's metadata at most."""
        await self._require(*key_offer(project_id, "managing"))
        return await self._all(KeyInfo, "keys", self._keys_url(project_id))

    async def create_key(
        self, project_id: str | None, label: str, idempotency_key: str | None = None
    ) -> KeyInfo:
        """A new key; its `key` (a secret) is in this answer only."""
        await self._require(*key_offer(project_id, "creating"))
        response = await self._write(
            "POST", self._keys_url(project_id), {"label": label}, idempotency_key=idempotency_key
        )
        created = KeyInfo.model_validate(read_record(response))
        if created.key is None:
            raise BadResponse(
                "The server made the key but its answer does not hold it "
                f"(HTTP {response.status_code}): revoke it and make another",
                response.status_code,
            )
        self._remember(created.key)
        return created

    async def revoke_key(self, project_id: str | None, key_id: str) -> None:
        await self._require(*key_offer(project_id, "revoking"))
        await self._write("DELETE", f"{self._keys_url(project_id)}/{segment(key_id)}")

    # -- projects --------------------------------------------------------------------------------

    async def update_project(
        self, project_id: str, changes: dict[str, Any], dry_run: bool = False
    ) -> ProjectChange:
        """The project changed (name, description, retention_days), and how many stored traces
        a shortened retention deletes; with `dry_run`, nothing changes and the answer says what
        would happen."""
        await self._require("project_edit", "editing projects")
        response = await self._write(
            "PATCH",
            f"projects/{segment(project_id)}",
            changes,
            params={"dry_run": "true"} if dry_run else None,
        )
        return ProjectChange.model_validate(read_record(response))

    async def delete_project(self, project_id: str) -> None:
        """The project, its traces, alerts and keys, gone."""
        await self._require("project_delete", "deleting projects")
        await self._write("DELETE", f"projects/{segment(project_id)}")

    # -- alerts ----------------------------------------------------------------------------------

    @staticmethod
    def _alert_url(project_id: str, alert_id: str) -> str:
        return f"projects/{segment(project_id)}/alerts/{segment(alert_id)}"

    async def update_alert(self, project_id: str, alert_id: str, changes: dict[str, Any]) -> Alert:
        """The alert with `changes` (any of its fields, `paused`, `muted_until`) made."""
        await self._require("alert_edit", "changing alerts")
        body = {
            field: iso(value) if isinstance(value, datetime) else value
            for field, value in changes.items()
        }
        response = await self._write(
            "PATCH", self._alert_url(project_id, alert_id), body, project_id=project_id
        )
        return Alert.model_validate(read_record(response))

    async def delete_alert(self, project_id: str, alert_id: str) -> None:
        await self._require("alert_delete", "deleting alerts")
        await self._write("DELETE", self._alert_url(project_id, alert_id), project_id=project_id)

    async def rotate_secret(self, project_id: str, alert_id: str) -> RotatedSecret:
        """A new signing secret (in this answer only); the previous one signs too until
        `previous_valid_until`."""
        await self._require("secret_rotation", "new webhook secrets")
        url = self._alert_url(project_id, alert_id) + "/rotate-secret"
        response = await self._write("POST", url, {}, project_id=project_id)
        rotated = RotatedSecret.model_validate(read_record(response))
        if rotated.secret is None:
            raise BadResponse(
                f"The server's answer holds no secret (HTTP {response.status_code})",
                response.status_code,
            )
        self._remember(rotated.secret)
        return rotated

    async def send_test_event(self, project_id: str, alert_id: str) -> str | None:
        """Queue a test event for the alert's webhook; its id (the alert's history shows how
        the receiver answered), if the server said."""
        return (await self._test_event(project_id, alert_id, wait=False)).webhook_id

    async def test_webhook(self, project_id: str, alert_id: str) -> DeliveryOutcome:
        """Send the alert's webhook a test event and learn how the receiver took it: the
        service's `?wait=true` extension answers the first attempt's status and latency, or
        its error. A server that only queues it (202) leaves `answered` False: the alert's
        history shows the outcome."""
        return await self._test_event(project_id, alert_id, wait=True)

    async def _test_event(self, project_id: str, alert_id: str, wait: bool) -> DeliveryOutcome:
        await self._require("alert_test", "test events")
        url = self._alert_url(project_id, alert_id) + "/test"
        response = await self._write(
            "POST", url, {}, project_id=project_id, params={"wait": "true"} if wait else None
        )
        try:
            data = read_record(response)
        except BadResponse:
            return DeliveryOutcome(None)
        return DeliveryOutcome.of(data, answered=response.status_code == 200)
