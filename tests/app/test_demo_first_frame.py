"""`tracetui demo` draws its first frame before its data exists: the starting screen says what
is being done while the database is filled and the service started (in the app's loading
thread), then the projects show; everything the demo started stops with it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support.app import rendered_text, showing, wait_for
from tui.demo import data
from tui.demo.run import DemoStart
from tui.server.store.sqlite.store import Store
from tui.ui.app import TraceTuiApp
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.starting import StartingScreen


def progress_text(app: Any) -> str:
    screens = [screen for screen in app.screen_stack if isinstance(screen, StartingScreen)]
    return rendered_text(screens[0].query_one("#progress")) if screens else ""


async def test_the_first_frame_comes_before_the_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded = threading.Event()
    release = threading.Event()

    def small_demo_store(path: Any, seed: int = 7, progress: Any = None) -> Any:
        release.wait(60)  # the data is being made: held until the test has looked
        store = Store(path)
        keys = data.populate(store, seed, scale=0.01, big_traces=False, progress=progress)
        seeded.set()
        return store, keys

    monkeypatch.setattr(data, "open_demo_store", small_demo_store)
    demo = DemoStart(str(tmp_path / "demo.sqlite3"), 7, feed=False)
    app = TraceTuiApp(demo.make_client, profile="demo")
    demo.app = app
    try:
        async with app.run_test() as pilot:
            await wait_for(pilot, lambda: "Loading the local service" in progress_text(app))
            assert showing(app, StartingScreen) and not seeded.is_set()
            release.set()
            await wait_for(pilot, lambda: "Demo data 3/3" in progress_text(app))
            await wait_for(pilot, lambda: showing(app, ProjectsScreen))
            await wait_for(pilot, lambda: len(app.projects) == 3)
        await app.close_client()
    finally:
        release.set()
        demo.stop()
