"""The service's one config (tui/server/config.py): each option has its flag, its variable and
its line in docs/serve.md; a flag wins over its variable, a variable over the default; a bad
value is refused with a message naming where it came from."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from tui.cli import build_parser
from tui.server.config import IN_PROCESS, OPTIONS, InvalidOption, ServerConfig, options_table

DOCS = Path(__file__).resolve().parents[2] / "docs" / "serve.md"


def serve_flags(*argv: str) -> dict[str, object]:
    return vars(build_parser().parse_args(["serve", *argv]))


def test_every_field_has_one_option_and_a_line_in_the_docs() -> None:
    names = [f.name for f in fields(ServerConfig)]
    assert names == [option.name for option in OPTIONS]
    assert len({o.flag for o in OPTIONS}) == len({o.env for o in OPTIONS}) == len(OPTIONS)
    docs = DOCS.read_text()
    for option in OPTIONS:
        assert f"| `{option.name}` | `{option.flag}` | `{option.env}` |" in docs, option.name
    assert options_table() in docs, "docs/serve.md is behind tui/server/config.py: regenerate"


def test_defaults_come_from_the_config_alone(capsys: pytest.CaptureFixture[str]) -> None:
    flags = serve_flags()
    assert all(flags[option.name] is None for option in OPTIONS), "argparse must not default"
    assert ServerConfig.from_sources(flags, {}) == ServerConfig()
    with pytest.raises(SystemExit):
        serve_flags("--help")
    shown = " ".join(capsys.readouterr().out.split())
    assert "(default: 8000; env TRACETUI_PORT)" in shown


def test_a_flag_wins_over_its_variable_which_wins_over_the_default() -> None:
    environ = {
        "TRACETUI_DB": "/data/from-env.sqlite3",
        "TRACETUI_PORT": "9001",
        "TRACETUI_ALLOW_PRIVATE_WEBHOOKS": "yes",
        "TRACETUI_ACCESS_LOG": "off",
        "TRACETUI_INGEST_PROCESSES": "0",
    }
    config = ServerConfig.from_sources(serve_flags("--port", "9002", "--rate-limit", "5"), environ)
    assert config.db == "/data/from-env.sqlite3" and config.database == config.db
    assert config.port == 9002 and config.rate_limit == 5
    assert config.allow_private_webhooks is True and config.access_log is False
    assert config.ingest_processes == 0 and config.workers == 0
    assert config.alert_interval_s == ServerConfig().alert_interval_s
    assert ServerConfig.from_sources(serve_flags("--no-access-log"), {}).access_log is False
    assert ServerConfig().database == "tracetui.sqlite3" and ServerConfig().workers >= 1


def test_the_connection_limits_are_options_like_the_others() -> None:
    environ = {"TRACETUI_MAX_HEADER_BYTES": "16384", "TRACETUI_HEADER_TIMEOUT": "2.5"}
    flags = serve_flags("--max-connections", "50", "--idle-timeout", "30", "--header-timeout", "4")
    config = ServerConfig.from_sources(flags, environ)
    assert config.max_header_bytes == 16384 and config.header_timeout_s == 4.0
    assert config.max_connections == 50 and config.idle_timeout_s == 30.0
    defaults = ServerConfig()
    assert (defaults.max_header_bytes, defaults.header_timeout_s) == (64 * 1024, 10.0)
    assert (defaults.idle_timeout_s, defaults.max_connections) == (15.0, 1000)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TRACETUI_PORT", "eighty"),
        ("TRACETUI_PORT", "70000"),
        ("TRACETUI_RATE_LIMIT", "0"),
        ("TRACETUI_ALERT_INTERVAL", "-1"),
        ("TRACETUI_WEBHOOK_TIMEOUT", "0"),
        ("TRACETUI_INGEST_PROCESSES", "65"),
        ("TRACETUI_ALLOW_PRIVATE_WEBHOOKS", "maybe"),
        ("TRACETUI_MAX_HEADER_BYTES", "0"),
        ("TRACETUI_HEADER_TIMEOUT", "0"),
        ("TRACETUI_IDLE_TIMEOUT", "never"),
        ("TRACETUI_MAX_CONNECTIONS", "-1"),
    ],
)
def test_a_bad_variable_is_refused_naming_it(name: str, value: str) -> None:
    with pytest.raises(InvalidOption, match=name):
        ServerConfig.from_sources(serve_flags(), {name: value})


def test_a_bad_flag_is_refused_by_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        serve_flags("--webhook-timeout", "soon")
    assert exit_.value.code == 2
    assert "--webhook-timeout" in capsys.readouterr().err


def test_serve_stops_with_a_message_on_a_bad_variable(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tui", "serve", "--db", str(tmp_path / "s.sqlite3")],
        env={"TRACETUI_PORT": "eighty", "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "TRACETUI_PORT" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "s.sqlite3").exists()


def test_in_process_differs_from_serve_only_where_it_says() -> None:
    differs = {f.name for f in fields(ServerConfig)} - {
        f.name
        for f in fields(ServerConfig)
        if getattr(IN_PROCESS, f.name) == getattr(ServerConfig(), f.name)
    }
    assert differs == {"port", "alert_interval_s", "ingest_processes", "access_log"}
