"""Faults that hold up a process as it stops, for `tracetui serve` run by a test: the test puts
this folder on PYTHONPATH and names the fault in TRACETUI_TEST_STUCK. Read once, by the first
process that starts (the service), and taken out of the environment, so the ingest worker
processes it spawns run without it.

- `store-call`: the store's release of webhook claims, which every stop makes, never returns
  (a database that stopped answering, a lock never let go), in whatever thread calls it.
- `exit`: a job of a concurrent.futures thread pool never ends; the interpreter joins such
  jobs as it exits (an executor job that waits for ever).
"""

from __future__ import annotations

import os
import threading

_FAULT = os.environ.pop("TRACETUI_TEST_STUCK", "")

if _FAULT == "store-call":
    from tui.server.store.alerts import AlertTables

    def _never_returns(self: object, holder: str) -> int:
        threading.Event().wait()
        return 0

    AlertTables.release_claims = _never_returns  # type: ignore[method-assign,assignment]
elif _FAULT == "exit":
    import concurrent.futures

    _POOL = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="stuck")
    _POOL.submit(threading.Event().wait)
elif _FAULT:
    raise SystemExit(f"sitecustomize: no fault named {_FAULT!r}")
