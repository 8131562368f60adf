"""`tracetui demo`: the app against the local service, started in-process over demo data.

The app's first frame comes first: the database is filled and the service started in the
client's loading thread (TraceTuiApp's client factory), while the starting screen says what is
being done. The service evaluates alerts every DEMO_ALERT_INTERVAL_S seconds and sends their
webhooks to a receiver the demo runs itself on loopback; the live feed's incidents make the live
alert fire and resolve within the first few minutes.
"""

from __future__ import annotations

import asyncio
import sys
from contextlib import ExitStack
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.api.client import ApiClient
    from tui.ui.app import TraceTuiApp

DEMO_ALERT_INTERVAL_S = 10.0


class DemoStart:
    """What the demo starts behind the app, made in the app's loading thread (`make_client`)
    and stopped, whatever happened, by `stop`."""

    def __init__(self, db: str | None, seed: int, feed: bool) -> None:
        self.db, self.seed, self.feed = db, seed, feed
        self.app: TraceTuiApp | None = None
        self._running = ExitStack()

    def progress(self, text: str) -> None:
        """Say on the starting screen what is being done (from the loading thread)."""
        if self.app is not None:
            self.app.call_from_thread(self.app.show_progress, text)

    def make_client(self) -> ApiClient:
        from pydantic import SecretStr

        from tui.ui.app import StartFailed

        self.progress("Loading the local service…")
        from tui.api.client import ApiClient
        from tui.demo.data import open_demo_store, point_alerts_at
        from tui.demo.receiver import DemoReceiver
        from tui.server.config import IN_PROCESS
        from tui.server.run import LocalService
        from tui.server.store.errors import SchemaTooNew

        try:
            store, keys = open_demo_store(self.db, self.seed, progress=self.progress)
        except SchemaTooNew as error:  # a database from a newer tracetui: say so, no traceback
            raise StartFailed(f"tracetui: {error}") from None

        def secret_of(alert_id: str) -> str | None:
            row = store.alert_secret(alert_id)
            return None if row is None else row.secret

        self.progress("Starting the local service…")
        receiver = DemoReceiver(secret_of).start()
        self._running.callback(receiver.stop)
        point_alerts_at(store, receiver.url)
        config = replace(
            IN_PROCESS, alert_interval_s=DEMO_ALERT_INTERVAL_S, allow_private_webhooks=True
        )
        service = self._running.enter_context(LocalService(store, config))
        if self.feed:
            # A simulated app sending traces over OTLP, as a real one would: `L` in the trace
            # list shows them arrive.
            from tui.demo.feed import Feed, Incidents

            live = Feed(service.base_url.removesuffix("/v1"), keys.projects, incidents=Incidents())
            self._running.callback(live.stop)
            live.start()
        # The workspace key reads every project; the project keys are there as a user's config
        # would hold them, so each request goes out with its own project's key.
        return ApiClient(
            service.base_url,
            SecretStr(keys.workspace),
            {project: SecretStr(key) for project, key in keys.projects.items()},
        )

    def stop(self) -> None:
        """Stop the feed, the service and the receiver (newest first), if they were started."""
        self._running.close()


def run_demo(db: str | None, seed: int, mouse: bool = True, feed: bool = True) -> int:
    from tui.ui.app import TraceTuiApp

    demo = DemoStart(db, seed, feed)
    app = TraceTuiApp(demo.make_client, profile="demo")
    demo.app = app

    async def main() -> None:
        try:
            await app.run_async(mouse=mouse)
        finally:
            await app.close_client()

    try:
        asyncio.run(main())
    finally:
        demo.stop()
    if app.start_failure is not None:
        print(app.start_failure, file=sys.stderr)
        return 2
    return 0
