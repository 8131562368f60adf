"""Profiles, environment overrides, key sources and file permissions."""

from __future__ import annotations

import os
import stat
import subprocess
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


COMMENTED = """\
# tracetui: my settings (kept by hand)
default_profile = "prod"  # the usual one

# Production, in the EU.
[profiles.prod]
base_url = "https://traces.example.com/v1"  # behind the VPN
api_key_env = "PROD_KEY"


[keymap]
# Vim habits.
quit = "ctrl+q"

[profiles.prod.project_keys]
proj_a = "inline-a"  # rotated in March
proj_b = { env = "PROJ_B_KEY" }

[profiles.staging]
base_url = "https://staging.example.com/v1"
"""


def _saved(tmp_path: Path, text: str, profile: str, project_id: str, key: str) -> str:
    path = tmp_path / "config.toml"
    path.write_text(text)
    path.chmod(0o600)
    save_project_key(path, profile, project_id, SecretStr(key))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    return path.read_text()


def test_saving_a_key_keeps_every_comment_table_and_blank_line(tmp_path: Path) -> None:
    written = _saved(tmp_path, COMMENTED, "prod", "proj_new", "new-key")
    # Everything the user wrote is still there, line for line and in order; one line is added.
    added = [line for line in written.splitlines() if line not in COMMENTED.splitlines()]
    assert added == ['proj_new = "new-key"']
    assert [line for line in written.splitlines() if line != added[0]] == COMMENTED.splitlines()
    assert written.index('proj_b = { env = "PROJ_B_KEY" }') < written.index("proj_new")
    settings = load_settings(
        env={"PROD_KEY": "p", "PROJ_B_KEY": "b"}, path=tmp_path / "config.toml"
    )
    keys = {k: v.get_secret_value() for k, v in settings.project_keys.items()}
    assert keys == {"proj_a": "inline-a", "proj_b": "b", "proj_new": "new-key"}
    assert settings.keymap == {"quit": "ctrl+q"}


def test_replacing_a_key_keeps_the_comment_on_its_line(tmp_path: Path) -> None:
    written = _saved(tmp_path, COMMENTED, "prod", "proj_a", "rotated-a")
    assert 'proj_a = "rotated-a"  # rotated in March' in written
    assert "inline-a" not in written
    assert len(written.splitlines()) == len(COMMENTED.splitlines())


def test_a_key_for_a_profile_without_keys_gets_its_own_table(tmp_path: Path) -> None:
    written = _saved(tmp_path, COMMENTED, "staging", "proj_s", "s-key")
    assert written.startswith(COMMENTED)  # the file's end was the staging table
    assert written[len(COMMENTED) :] == '\n[profiles.staging.project_keys]\nproj_s = "s-key"\n'
    # A new profile's table is set off by blank lines from the tables around it.
    written = _saved(tmp_path, COMMENTED, "fresh", "proj_f", "f-key")
    assert '\n\n[profiles.fresh.project_keys]\nproj_f = "f-key"\n\n' in written
    for line in COMMENTED.splitlines():
        assert line in written
    assert (
        load_settings(profile="fresh", env={}, path=tmp_path / "config.toml")
        .project_keys["proj_f"]
        .get_secret_value()
        == "f-key"
    )


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("", ""),
        ("# only a comment", "# only a comment\n"),  # and no newline at the end
        (
            '[profiles]\nprod = { base_url = "https://a.example.com/v1" }\n',
            '[profiles]\nprod = { base_url = "https://a.example.com/v1", ',
        ),
        ('[profiles.prod]\nproject_keys = { proj_a = "a" }\n', 'project_keys = { proj_a = "a", '),
        (
            'profiles.prod.base_url = "https://a.example.com/v1"\n',
            'profiles.prod.base_url = "https://a.example.com/v1"\n',
        ),
    ],
    ids=["empty", "no-final-newline", "inline-profile", "inline-keys", "dotted-keys"],
)
def test_saving_into_every_shape_of_file_reads_back(tmp_path: Path, text: str, kept: str) -> None:
    written = _saved(tmp_path, text, "prod", "proj_x", "x-key")
    assert kept in written
    settings = load_settings(profile="prod", env={}, path=tmp_path / "config.toml")
    assert settings.project_keys["proj_x"].get_secret_value() == "x-key"


HOSTILE = 'k"ey\n]\n[profiles.evil]\napi_key = "x"\n\\u0041 \x1b[31m\x7f'


def test_a_hostile_key_profile_and_project_are_written_as_data(tmp_path: Path) -> None:
    profile = 'pro"f]\n[x]'
    project = 'proj"]\n= "injected"'
    written = _saved(tmp_path, COMMENTED, profile, project, HOSTILE)
    assert "\x1b" not in written and "\x7f" not in written  # escaped, not raw
    settings = load_settings(profile=profile, env={}, path=tmp_path / "config.toml")
    assert {k: v.get_secret_value() for k, v in settings.project_keys.items()} == {project: HOSTILE}
    # No table or key came out of the values.
    assert set(settings.profiles) == {"prod", "staging", profile}
    data = read_config(tmp_path / "config.toml")
    assert data.keys() == {"default_profile", "profiles", "keymap"}
    assert data["profiles"]["prod"]["project_keys"].keys() == {"proj_a", "proj_b"}


def test_a_crlf_file_keeps_its_line_ends(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'# windows\r\n[profiles.prod]\r\nbase_url = "https://a.example.com/v1"\r\n')
    save_project_key(path, "prod", "p", SecretStr("k"))
    written = path.read_bytes()
    assert written.startswith(
        b'# windows\r\n[profiles.prod]\r\nbase_url = "https://a.example.com/v1"\r\n'
    )
    assert written.count(b"\n") == written.count(b"\r\n") == 6
    settings = load_settings(profile="prod", env={}, path=path)
    assert settings.project_keys["p"].get_secret_value() == "k"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('profiles = "oops"\n', r"\[profiles\] must be a table"),
        ("[profiles]\nprod = 3\n", "profile 'prod' must be a table"),
        ('[profiles.prod]\nproject_keys = ["a"]\n', "project_keys of 'prod' must be a table"),
    ],
)
def test_saving_into_a_file_of_the_wrong_shape_says_where(
    tmp_path: Path, text: str, where: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=where):
        save_project_key(path, "prod", "p", SecretStr("secret-value"))
    assert path.read_text() == text


def test_saving_refuses_a_file_that_reading_refuses(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('api_key = "secret-value\n')
    with pytest.raises(ConfigError, match="not valid TOML") as caught:
        save_project_key(path, "prod", "p", SecretStr("k"))
    assert "secret-value" not in str(caught.value)
    assert path.read_text() == 'api_key = "secret-value\n'


def test_reading_the_config_never_imports_tomlkit() -> None:
    code = (
        "import sys, tempfile, pathlib\n"
        "from tui.config import load_settings\n"
        "d = pathlib.Path(tempfile.mkdtemp()) / 'c.toml'\n"
        "d.write_text('[profiles.default]\\nbase_url = \"https://a.example.com/v1\"\\n')\n"
        "load_settings(env={}, path=d)\n"
        "print(sorted(m for m in sys.modules if m.startswith('tomlkit')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_project_keys_that_are_not_a_table_are_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[profiles.default]\nproject_keys = ["secret-value"]\n')
    with pytest.raises(ConfigError, match="project_keys of 'default' must be a table") as caught:
        load_settings(env={}, path=path)
    assert "secret-value" not in str(caught.value)
