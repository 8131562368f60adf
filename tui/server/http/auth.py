"""Reading `Authorization: Bearer <key>` as RFC 7235 has it: the scheme in any case, the
credentials after any run of spaces or tabs, the token a token68 (letters, digits and
-._~+/, then any '='). One reading for the rate limiter and the routes, so that `bearer K` or an
extra space is the same key to both, never a fresh budget."""

from __future__ import annotations

import re

_CREDENTIALS = re.compile(r"[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]+([A-Za-z0-9._~+/-]+=*)[ \t]*")

MISSING = "Missing Authorization header; send 'Authorization: Bearer <API key>'."
MALFORMED = "Malformed Authorization header; expected 'Bearer <API key>'."
UNKNOWN = "Unknown API key."


class Malformed(ValueError):
    """An Authorization header that is not `Bearer <token68>`."""


def bearer_token(header: str | None) -> str | None:
    """The key in a Bearer header; None when there is no header at all; Malformed otherwise.
    The error never carries the header: it may hold a key."""
    if header is None or not header.strip():
        return None
    match = _CREDENTIALS.fullmatch(header)
    if match is None or match.group(1).lower() != "bearer":
        raise Malformed(MALFORMED)
    return match.group(2)
