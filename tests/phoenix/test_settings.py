"""Profiles of kind "phoenix", its key as Phoenix's clients read it and send it (Bearer), and
Phoenix's plain-text errors through the client's typed errors. No Phoenix needed: the answers
here are made by an httpx transport, as Phoenix words them."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tui.api import ServerError, Unauthorized
from tui.api.kinds import open_source
from tui.api.phoenix.address import phoenix_root
from tui.api.phoenix.client import PhoenixClient
from tui.config import ConfigError, load_settings

KEY = "phx-secret-key-1234"


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


def test_a_phoenix_profile_takes_phoenix_api_key(tmp_path: Path) -> None:
    config = write(
        tmp_path / "config.toml",
        '[profiles.px]\nkind = "phoenix"\nbase_url = "http://127.0.0.1:6006"\n',
    )
    settings = load_settings("px", env={"PHOENIX_API_KEY": KEY}, path=config)
    assert settings.kind == "phoenix" and settings.base_url == "http://127.0.0.1:6006"
    assert settings.api_key is not None and settings.api_key.get_secret_value() == KEY
    assert KEY not in repr(settings)


def test_phoenix_api_key_is_not_given_to_other_kinds(tmp_path: Path) -> None:
    settings = load_settings(
        base_url="http://127.0.0.1:6006/v1", env={"PHOENIX_API_KEY": KEY}, path=tmp_path / "none"
    )
    # No kind given: "auto" (the app asks the server what it is); Phoenix's key only for a
    # server found to be Phoenix (tests/phoenix/test_client.py).
    assert settings.kind == "auto" and settings.api_key is None


def test_the_kind_flag_wins_and_an_unknown_kind_is_refused(tmp_path: Path) -> None:
    settings = load_settings(
        base_url="http://127.0.0.1:6006", kind="phoenix", env={}, path=tmp_path / "none"
    )
    assert settings.kind == "phoenix"
    config = write(tmp_path / "config.toml", '[profiles.x]\nkind = "jaeger"\n')
    with pytest.raises(ConfigError, match="kind must be one of spec, phoenix"):
        load_settings("x", env={}, path=config)


@pytest.mark.parametrize(
    "given",
    ["http://127.0.0.1:6006", "http://127.0.0.1:6006/", "http://127.0.0.1:6006/v1/"],
)
def test_phoenix_is_given_by_its_address_with_or_without_v1(given: str) -> None:
    assert phoenix_root(given) == "http://127.0.0.1:6006"


async def test_the_key_goes_as_a_bearer_token_and_never_into_errors() -> None:
    seen: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization"))
        # Phoenix's words when a key is refused, in plain text, echoing what it was sent.
        return httpx.Response(401, text=f"Invalid token: {KEY}")

    client = open_source("phoenix", "http://127.0.0.1:6006", KEY)
    assert isinstance(client, PhoenixClient)
    await client.aclose()
    async with PhoenixClient(
        "http://127.0.0.1:6006", KEY, transport=httpx.MockTransport(answer)
    ) as client:
        with pytest.raises(Unauthorized) as refused:
            await client.list_projects()
    assert seen == [f"Bearer {KEY}"]
    assert "Invalid token" in refused.value.message and "(HTTP 401)" in refused.value.message
    assert KEY not in refused.value.message


async def test_a_plain_text_server_error_is_shown_as_phoenix_wrote_it() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            500, text="Internal Server Error", headers={"content-type": "text/plain"}
        )

    async with PhoenixClient(
        "http://127.0.0.1:6006", transport=httpx.MockTransport(answer), max_retries=0
    ) as client:
        with pytest.raises(ServerError, match=r"Internal Server Error \(HTTP 500\)"):
            await client.list_traces("default")


def test_a_phoenix_recognised_by_its_address_gets_phoenix_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started without --kind on a Phoenix's address: once it is recognised, its key is read
    from PHOENIX_API_KEY as for a profile of kind phoenix."""
    import tui.api.kinds as kinds
    import tui.ui.app as app_module
    from tui.cli import run_app
    from tui.ui.app import StartAt

    keys: list[object] = []

    class NoApp:
        def __init__(self, make_client: object, *args: object, **kwargs: object) -> None:
            self.make_client = make_client

        async def run_async(self, mouse: bool) -> None:
            self.make_client()  # type: ignore[operator]

        async def close_client(self) -> None:
            pass

    monkeypatch.setattr(
        kinds, "checked_address", lambda kind, url: ("phoenix", url, "recognised as Phoenix")
    )
    monkeypatch.setattr(app_module, "TraceTuiApp", NoApp)
    monkeypatch.setattr(
        kinds, "open_source", lambda kind, url, key, project_keys: keys.append((kind, key))
    )
    monkeypatch.setenv("PHOENIX_API_KEY", KEY)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("TRACETUI_API_KEY", raising=False)
    assert run_app(None, "http://127.0.0.1:6006", False, StartAt()) == 0
    [(kind, key)] = keys
    assert kind == "phoenix" and key is not None
    assert key.get_secret_value() == KEY  # type: ignore[attr-defined]
