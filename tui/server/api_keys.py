"""API keys: how they are made, stored, named, revoked and noted as used. `tracetui keys`
(keys_cli), the /v1/keys routes (routes/keys) and the store's key tables (store/keys) share it.

A key is `tt_ws_` (workspace) or `tt_pk_` (project) and 32 random characters. The store keeps
its SHA-256 only, so the key is shown once, by whoever made it; afterwards a key is known by
its id (the first 12 hex digits of that hash; the API writes it `key_<digits>`), its label
and its prefix (the first 10 characters). A revoked key fails at once: the service looks keys
up on every request. The last workspace key is never revoked (LAST_WORKSPACE_KEY): without
one nobody could manage the service through the API.

A key's last use is noted cheaply (KeyUsage): the rate limiter's middleware looks a request's
key up (http.identity.key_identity) and hands it here. This process remembers when it last wrote each key's
use, so a request costs a dictionary look-up; once a minute per key it writes, and the store's
conditional UPDATE skips the row if another process or replica wrote it within the minute. A
write that fails (a busy or read-only store) is dropped: the request never waits on it or fails
for it.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
from collections.abc import Callable

from tui.server.store.protocol import TraceStore
from tui.server.store.rows import ApiKeyRow, KeyInfo, Reply, now_ms

log = logging.getLogger("tracetui.server")

MAX_LABEL = 100
KEY_ID_LENGTH = 12  # hex digits of the hash that name a key
KEY_PREFIX_LENGTH = 10
KEY_ID_PREFIX = "key_"  # the API's key ids: key_ and the 12 hex digits `keys list` shows
# What revoking a key may come to (TraceStore.remove_key).
REVOKED, NO_SUCH_KEY, LAST_WORKSPACE_KEY = "revoked", "missing", "last_workspace_key"
# A key's last use is written at most this often: a request costs no write, a key used all
# day costs one a minute.
KEY_USE_RESOLUTION_MS = 60_000
MAX_REMEMBERED = 10_000  # keys whose last write is remembered; beyond, the memo starts again


def hash_key(api_key: str) -> str:
    """The stored form of an API key."""
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest()


def key_prefix(api_key: str) -> str:
    """The start of a key a person tells it by (`tt_pk_ab12`): its kind and 4 random
    characters of its 32, which give nothing useful away."""
    return api_key[:KEY_PREFIX_LENGTH]


def key_info(row: ApiKeyRow) -> KeyInfo:
    """A key's public face: an id from the first digits of its hash, never the key."""
    return KeyInfo(
        row.key_hash[:KEY_ID_LENGTH],
        row.project_id,
        row.label,
        row.created_at,
        row.prefix,
        row.last_used_at,
    )


def new_api_key(kind: str) -> str:
    """A fresh random key; the prefix tells a workspace key (`ws`) from a project key (`pk`)."""
    return f"tt_{kind}_{secrets.token_urlsafe(24)}"


def new_key(project_id: str | None, label: str) -> tuple[str, ApiKeyRow]:
    """A fresh key for `project_id` (None: the workspace) and its row, not stored yet."""
    key = new_api_key("pk" if project_id else "ws")
    row = ApiKeyRow(hash_key(key), project_id, label[:MAX_LABEL], now_ms(), key_prefix(key))
    return key, row


def create_key(store: TraceStore, project_id: str | None, label: str) -> tuple[str, KeyInfo]:
    """Make and store a key; the key (shown once) and its metadata."""
    key, row = new_key(project_id, label)
    store.create_once(row, None, 201, {})
    return key, key_info(row)


def keys_of(store: TraceStore, project_id: str | None) -> list[KeyInfo]:
    """`project_id`'s keys (None: the workspace keys), oldest first."""
    return [k for k in store.list_keys() if k.project_id == project_id]


def plain_key_id(key_id: str) -> str:
    """A key id as the store knows it: without the API's `key_`."""
    return key_id.removeprefix(KEY_ID_PREFIX).lower()


def revoke_key(
    store: TraceStore, key_id: str, project_id: str | None, reply: Reply | None = None
) -> str:
    """Revoke `project_id`'s key `key_id` (None: a workspace key): REVOKED, NO_SUCH_KEY, or
    LAST_WORKSPACE_KEY (refused); `reply` as TraceStore.remove_key takes it."""
    return store.remove_key(plain_key_id(key_id), project_id, reply)


class KeyUsage:
    """Each key's last use, written at most once a minute (see the module's docstring)."""

    def __init__(self, store: TraceStore, clock: Callable[[], int]) -> None:
        self.store = store
        self.clock = clock
        self._written: dict[str, int] = {}
        self._lock = threading.Lock()

    def note(self, key_hash: str) -> None:
        """Note a use of the key with this hash (blocks at most once a minute: a thread)."""
        now = self.clock()
        with self._lock:
            last = self._written.get(key_hash)
            if last is not None and now - last < KEY_USE_RESOLUTION_MS:
                return
            if len(self._written) >= MAX_REMEMBERED:
                self._written.clear()
            self._written[key_hash] = now
        try:
            self.store.note_key_used(key_hash, now)
        except Exception as error:
            log.debug("a key's last use was not noted (%s)", type(error).__name__)
