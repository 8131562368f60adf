"""When each API key was last used, noted cheaply: at most one write per key a minute.

The rate limiter's middleware looks a request's key up (asgi.key_identity) and hands it here.
This process remembers when it last wrote each key's use, so a request costs a dictionary
look-up; once a minute per key it writes, and the store's conditional UPDATE skips the row if
another process or replica wrote it within the minute. A write that fails (a busy or
read-only store) is dropped: the request never waits on it or fails for it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from tui.server.backend import TraceStore
from tui.server.store_admin import KEY_USE_RESOLUTION_MS

log = logging.getLogger("tracetui.server")
MAX_REMEMBERED = 10_000  # keys whose last write is remembered; beyond, the memo starts again


class KeyUsage:
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
