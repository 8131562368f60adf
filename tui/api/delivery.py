"""What a test event's delivery answered (`ManageCalls.test_webhook`), read from the service's
`?wait=true` extension, or only its id from a server that queues it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DeliveryOutcome:
    """A test event sent: its webhook id, and, when the server waited for the first attempt
    (`answered`), whether the receiver took it, its status code, latency or error."""

    webhook_id: str | None
    answered: bool = False
    delivered: bool = False
    status_code: int | None = None
    latency_ms: int | None = None
    error: str | None = None

    @classmethod
    def of(cls, data: dict[str, Any], answered: bool) -> DeliveryOutcome:
        def number(name: str) -> int | None:
            value = data.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        webhook_id = data.get("webhook_id") or data.get("id")
        error = data.get("error")
        answered = answered and ("delivered" in data or "status_code" in data)
        return cls(
            webhook_id if isinstance(webhook_id, str) else None,
            answered,
            data.get("delivered") is True,
            number("status_code"),
            number("latency_ms"),
            error if isinstance(error, str) else None,
        )
