"""Blocking work run from the event loop in daemon threads of its own.

Never in the loop's default executor (`asyncio.to_thread`, `run_in_executor(None, ...)`): the
interpreter joins that executor's threads as it exits (concurrent.futures registers an exit
hook that waits for every job queued there), so one store call that waits on a database that
stopped answering, or on a lock, holds up the exit of `tracetui serve` for as long as it
lasts, after the stop itself has given up on it. A daemon thread is abandoned at exit instead.
Threads are not pooled: what runs here is seldom (background rounds, webhook bookkeeping), and
a thread costs some tens of microseconds to start.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def in_daemon_thread(function: Callable[[], T], name: str) -> T:
    """Run `function` in a new daemon thread and wait for its result; its exception is raised
    here. Cancelling the wait abandons the thread to finish on its own."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if done.cancelled():  # the waiter was cancelled meanwhile: nobody waits
            return
        if error is None:
            done.set_result(result)  # type: ignore[arg-type]
        else:
            done.set_exception(error)

    def run() -> None:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = function()
        except Exception as exc:
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop has closed: an abandoned call
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name=f"tracetui-{name}", daemon=True).start()
    return await done
