"""Standard Webhooks signing (https://www.standardwebhooks.com): secrets and signatures.

A secret is `whsec_` followed by the base64 of 32 random bytes; the key is those bytes. Each
attempt sends `webhook-id` (the event's id, the same on every retry, so receivers can drop
repeats), `webhook-timestamp` (the attempt's time, unix seconds: receivers refuse old ones) and
`webhook-signature: v1,<base64 of HMAC-SHA256(key, "{id}.{timestamp}.{body}")>`.

After a rotation the header holds two signatures, space-separated as the spec allows (the new
secret's first, then the previous one's) until the previous secret's grace period ends, so a
receiver verifies with either secret and moves to the new one without a gap.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

PREFIX = "whsec_"


def new_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def signing_key(secret: str) -> bytes:
    """The key a `whsec_` secret stands for."""
    return base64.b64decode(secret.removeprefix(PREFIX))


def signature(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` header's value for one attempt."""
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    digest = hmac.new(signing_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(
    secret: str | list[str], webhook_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """The three Standard Webhooks headers of one attempt, signed by `secret` (or by each of
    a list of secrets)."""
    secrets_ = [secret] if isinstance(secret, str) else secret
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signature(s, webhook_id, timestamp, body) for s in secrets_),
    }
