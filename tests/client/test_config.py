"""Profiles, environment overrides, key sources and file permissions."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from tui.config import ConfigError, config_path, load_settings, read_config, save_project_key

CONFIG = """
default_profile = "prod"

[profiles.prod]
base_url = "https://traces.example.com/v1"
api_key = "inline-prod-key"

[profiles.prod.project_keys]
proj_a = "inline-a"
proj_b = { env = "PROJ_B_KEY" }

[profiles.staging]
base_url = "http://staging.internal/v1"
api_key_env = "STAGING_KEY"

[profiles.local]
base_url = "http://127.0.0.1:8000/v1"
api_key_command = "printf from-a-command"
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "tracetui" / "config.toml"
    path.parent.mkdir()
    path.write_text(CONFIG)
    path.chmod(0o600)
    return path


def test_xdg_config_home(tmp_path: Path) -> None:
    assert config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "tracetui" / "config.toml"
    assert config_path({}).parts[-3:] == (".config", "tracetui", "config.toml")


def test_default_profile_with_inline_and_env_keys(config: Path) -> None:
    settings = load_settings(env={"PROJ_B_KEY": "from-env-b"}, path=config)
    assert settings.profile == "prod" and settings.base_url == "https://traces.example.com/v1"
    assert settings.api_key and settings.api_key.get_secret_value() == "inline-prod-key"
    keys = {k: v.get_secret_value() for k, v in settings.project_keys.items()}
    assert keys == {"proj_a": "inline-a", "proj_b": "from-env-b"}
    assert settings.profiles == ("local", "prod", "staging")
    assert "inline" not in repr(settings)


def test_key_from_a_command_and_env_overrides(config: Path) -> None:
    settings = load_settings(profile="local", env={}, path=config)
    assert settings.api_key and settings.api_key.get_secret_value() == "from-a-command"
    env = {
        "TRACETUI_PROFILE": "local",
        "TRACETUI_BASE_URL": "http://localhost:9/v1",
        "TRACETUI_API_KEY": "env-key",
    }
    settings = load_settings(env=env, path=config)
    assert settings.base_url == "http://localhost:9/v1"
    assert settings.api_key and settings.api_key.get_secret_value() == "env-key"
    # A flag beats the environment.
    assert load_settings(base_url="https://flag.example.com/v1", env=env, path=config).base_url == (
        "https://flag.example.com/v1"
    )


def test_plain_http_to_another_host_warns(config: Path) -> None:
    staging = load_settings(profile="staging", env={"STAGING_KEY": "k"}, path=config)
    assert any("in clear" in w for w in staging.warnings)
    assert load_settings(profile="local", env={}, path=config).warnings == ()


def test_an_unreadable_base_url_is_left_to_the_client_to_refuse(config: Path) -> None:
    env = {"PROJ_B_KEY": "b"}
    settings = load_settings(base_url="http://[oops/v1", env=env, path=config)  # no ValueError
    assert settings.base_url == "http://[oops/v1" and settings.warnings == ()


def test_missing_sources_and_profiles_say_what_to_do(config: Path) -> None:
    with pytest.raises(ConfigError, match=r"\$STAGING_KEY"):
        load_settings(profile="staging", env={}, path=config)
    with pytest.raises(ConfigError, match="profiles there: local, prod, staging"):
        load_settings(profile="nope", env={}, path=config)
    assert load_settings(env={}, path=config.parent / "absent.toml").base_url is None


def test_a_failing_key_command_never_shows_its_output(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        "[profiles.default]\napi_key_command = \"sh -c 'echo leaked-secret; exit 3'\"\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(env={}, path=path)
    assert "exit status 3" in str(caught.value) and "leaked-secret" not in str(caught.value)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_a_key_file_readable_by_others_is_refused(config: Path) -> None:
    config.chmod(0o644)
    with pytest.raises(ConfigError) as caught:
        read_config(config)
    message = str(caught.value)
    assert "chmod 600" in message and "0644" in message and "inline" not in message
    # A file without keys in it may be readable.
    config.write_text('[profiles.x]\nbase_url = "https://a.example.com/v1"\napi_key_env = "K"\n')
    assert read_config(config)["profiles"]["x"]["api_key_env"] == "K"


def test_invalid_toml_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('api_key = "secret-value\n')
    with pytest.raises(ConfigError, match="not valid TOML") as caught:
        read_config(path)
    assert "secret-value" not in str(caught.value)


def test_saving_a_project_key_writes_0600(config: Path, tmp_path: Path) -> None:
    save_project_key(config, "prod", "proj_new", SecretStr('new "quoted" key'))
    assert stat.S_IMODE(os.stat(config).st_mode) == 0o600
    settings = load_settings(env={"PROJ_B_KEY": "b"}, path=config)
    assert settings.project_keys["proj_new"].get_secret_value() == 'new "quoted" key'
    assert settings.project_keys["proj_b"].get_secret_value() == "b"  # env source kept
    fresh = tmp_path / "new" / "config.toml"
    save_project_key(fresh, "default", "p", SecretStr("k"))
    assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o600
    assert load_settings(env={}, path=fresh).project_keys["p"].get_secret_value() == "k"
