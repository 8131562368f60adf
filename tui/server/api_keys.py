"""API keys made, listed and revoked: what `tracetui keys` and the /v1/keys routes share.

A key is `tt_ws_` (workspace) or `tt_pk_` (project) and 32 random characters. The store keeps
its SHA-256 only, so the key is shown once, by whoever made it; afterwards a key is known by
its id (the first 12 hex digits of that hash; the API writes it `key_<digits>`), its label
and its prefix (the first 10 characters). A revoked key fails at once: the service looks keys
up on every request. The last workspace key is never revoked (LAST_WORKSPACE_KEY): without
one nobody could manage the service through the API.
"""

from __future__ import annotations

from tui.server.backend import TraceStore
from tui.server.rows import ApiKeyRow, KeyInfo, now_ms
from tui.server.schemas import KEY_ID_PREFIX
from tui.server.store_admin import LAST_WORKSPACE_KEY, NO_SUCH_KEY, REVOKED
from tui.server.store_keys import hash_key, key_info, key_prefix, new_api_key

__all__ = [
    "LAST_WORKSPACE_KEY",
    "NO_SUCH_KEY",
    "REVOKED",
    "create_key",
    "keys_of",
    "new_key",
    "plain_key_id",
    "revoke_key",
]

MAX_LABEL = 100


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


def revoke_key(store: TraceStore, key_id: str, project_id: str | None) -> str:
    """Revoke `project_id`'s key `key_id` (None: a workspace key): REVOKED, NO_SUCH_KEY, or
    LAST_WORKSPACE_KEY (refused)."""
    return store.remove_key(plain_key_id(key_id), project_id)
