"""`tracetui demo`: the app against the local service, started in-process over demo data.

The service evaluates alerts every DEMO_ALERT_INTERVAL_S seconds and sends their webhooks to a
receiver the demo runs itself on loopback; the live feed's incidents make the live alert fire
and resolve within the first few minutes.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace

from pydantic import SecretStr

DEMO_ALERT_INTERVAL_S = 10.0


def run_demo(db: str | None, seed: int, mouse: bool = True, feed: bool = True) -> int:
    from tui.api.client import ApiClient
    from tui.demo.data import open_demo_store, point_alerts_at
    from tui.demo.receiver import DemoReceiver
    from tui.server.config import IN_PROCESS
    from tui.server.migrations import SchemaTooNew
    from tui.server.run import LocalService
    from tui.ui.app import TraceTuiApp

    try:
        store, keys = open_demo_store(db, seed)
    except SchemaTooNew as error:  # a database from a newer tracetui: say so, no traceback
        print(f"tracetui: {error}", file=sys.stderr)
        return 2

    def secret_of(alert_id: str) -> str | None:
        row = store.alert_secret(alert_id)
        return None if row is None else row.secret

    receiver = DemoReceiver(secret_of).start()
    point_alerts_at(store, receiver.url)
    config = replace(
        IN_PROCESS, alert_interval_s=DEMO_ALERT_INTERVAL_S, allow_private_webhooks=True
    )
    service = LocalService(store, config)
    with service:
        live = None
        if feed:
            # A simulated app sending traces over OTLP, as a real one would: `L` in the trace
            # list shows them arrive. Started after the service, so the app's start is as fast.
            from tui.demo.feed import Feed, Incidents

            live = Feed(
                service.base_url.removesuffix("/v1"), keys.projects, incidents=Incidents()
            ).start()

        async def main() -> None:
            # The workspace key reads every project; the project keys are there as a user's
            # config would hold them, so each request goes out with its own project's key.
            async with ApiClient(
                service.base_url,
                SecretStr(keys.workspace),
                {project: SecretStr(key) for project, key in keys.projects.items()},
            ) as client:
                await TraceTuiApp(client, profile="demo").run_async(mouse=mouse)

        try:
            asyncio.run(main())
        finally:
            if live is not None:
                live.stop()
            receiver.stop()
    return 0
