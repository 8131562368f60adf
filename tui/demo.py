"""`tracetui demo`: the app against the local service, started in-process over demo data."""

from __future__ import annotations

import asyncio
import sys

from pydantic import SecretStr


def run_demo(db: str | None, seed: int, mouse: bool = True, feed: bool = True) -> int:
    from tui.api.client import ApiClient
    from tui.app import TraceTuiApp
    from tui.server.migrations import SchemaTooNew
    from tui.server.run import LocalService, open_demo_store

    try:
        store, keys = open_demo_store(db, seed)
    except SchemaTooNew as error:  # a database from a newer tracetui: say so, no traceback
        print(f"tracetui: {error}", file=sys.stderr)
        return 2
    with LocalService(store) as service:
        live = None
        if feed:
            # A simulated app sending traces over OTLP, as a real one would: `L` in the trace
            # list shows them arrive. Started after the service, so the app's start is as fast.
            from tui.server.feed import Feed

            live = Feed(service.base_url.removesuffix("/v1"), keys.projects).start()

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
    return 0
