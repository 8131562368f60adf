"""`tracetui keys create|list|revoke`: API keys of a local service's database, from the shell.

A new key is printed alone on stdout (so `KEY=$(tracetui keys create ...)` captures it) and
everything else goes to stderr. Only a key's SHA-256 is stored; a key is known afterwards by
its id, the first 12 hex digits of that hash, which `list` shows and `revoke` takes (a prefix
of 6 or more digits will do, with or without the API's `key_`), or by its label. A running
service sees the change at once: it looks keys up on every request. Keys are made and revoked
by `api_keys`, as the /v1/keys routes make and revoke them: the last workspace key is never
revoked.

The database is the one serve uses: a SQLite file's path or a PostgreSQL URL (a URL's password
is never shown: errors name the database by `location`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TextIO

from tui.server.api_keys import LAST_WORKSPACE_KEY, REVOKED, create_key, plain_key_id, revoke_key
from tui.server.store.errors import SchemaTooNew, StoreUnreachable
from tui.server.store.opening import open_store
from tui.server.store.protocol import TraceStore
from tui.server.store.rows import KeyInfo
from tui.server.store.url import is_postgres

KEYS_POOL_SIZE = 2


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    # Looked up per call, not bound at import: whoever replaced sys.stdout since gets the key.
    out = out or sys.stdout
    err = err or sys.stderr
    if not is_postgres(args.db) and not Path(args.db).is_file():
        print(
            f"tracetui: no database at {args.db}; `tracetui serve` creates one, or pass --db PATH.",
            file=err,
        )
        return 2
    try:
        # A one-off command: two connections are plenty.
        store = open_store(args.db, pool_size=KEYS_POOL_SIZE)
    except (SchemaTooNew, StoreUnreachable) as error:
        print(f"tracetui: {error}", file=err)
        return 2
    try:
        if args.keys_command == "create":
            return create(store, args.project, args.label, out, err)
        if args.keys_command == "list":
            return show(store, out)
        return revoke(store, args.ref, err)
    finally:
        store.close()


def create(
    store: TraceStore, project_id: str | None, label: str | None, out: TextIO, err: TextIO
) -> int:
    if project_id is not None and store.get_project(project_id) is None:
        known = ", ".join(p.id for p in store.list_projects()) or "none yet"
        print(f"tracetui: no project {project_id!r} (projects: {known}).", file=err)
        return 2
    today = time.strftime("%Y-%m-%d", time.gmtime())
    key, info = create_key(store, project_id, label or f"{project_id or 'workspace'} key {today}")
    print(key, file=out, flush=True)
    print(
        f"Created {key_described(info)}. The key is shown this once: store it now.",
        file=err,
    )
    return 0


def show(store: TraceStore, out: TextIO) -> int:
    print(f"{'ID':<13} {'PREFIX':<11} {'PROJECT':<18} {'CREATED':<21} LABEL", file=out)
    for key in store.list_keys():
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(key.created_at / 1000))
        project = key.project_id or "(workspace)"
        print(
            f"{key.key_id:<13} {printable(key.prefix):<11} {printable(project):<18} "
            f"{created:<21} {printable(key.label)}",
            file=out,
        )
    return 0


def revoke(store: TraceStore, ref: str, err: TextIO) -> int:
    found = store.find_keys(plain_key_id(ref) if ref.lower().startswith("key_") else ref)
    if not found:
        print(f"tracetui: no key has the id or label {printable(ref)!r}.", file=err)
        return 1
    if len(found) > 1:
        ids = ", ".join(k.key_id for k in found)
        print(f"tracetui: {len(found)} keys match ({ids}); revoke one by its id.", file=err)
        return 2
    outcome = revoke_key(store, found[0].key_id, found[0].project_id)
    if outcome == LAST_WORKSPACE_KEY:
        print(
            f"tracetui: {key_described(found[0])} is the last workspace key: create another "
            "(tracetui keys create) before revoking it.",
            file=err,
        )
        return 2
    if outcome != REVOKED:
        print(f"tracetui: {key_described(found[0])} was revoked meanwhile.", file=err)
        return 1
    print(f"Revoked {key_described(found[0])}.", file=err)
    return 0


def key_described(key: KeyInfo) -> str:
    scope = f"project {key.project_id}" if key.project_id else "the workspace"
    return f"key {key.key_id} for {scope} (label {printable(key.label)!r})"


def printable(text: str) -> str:
    """Labels are typed by people, but a database can hold anything: no escape sequences."""
    return "".join(c if c.isprintable() else "?" for c in text)
