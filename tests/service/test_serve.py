"""`tracetui serve` as a user runs it: it answers until Ctrl-C, then stops cleanly."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.support.serve import serving


def test_serve_answers_until_interrupted_then_exits_cleanly(tmp_path: Path) -> None:
    with serving(tmp_path / "s.sqlite3") as served:
        key, url = served.key, served.base_url  # a new database: its key is printed once
        assert key, "serve printed no key"
        response = httpx.get(f"{url}/projects", headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 200 and response.json() == {"data": []}
        assert served.interrupt() == 0
        assert "Traceback" not in served.errors()
