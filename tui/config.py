"""Configuration: named profiles in $XDG_CONFIG_HOME/tracetui/config.toml, and env overrides.

    default_profile = "prod"

    [profiles.prod]
    base_url = "https://traces.example.com/v1"
    api_key_env = "TRACES_KEY"          # or api_key = "..." or api_key_command = "pass show x"

    [profiles.prod.project_keys]
    proj_abc = "tt_pk_..."              # inline, or { env = "VAR" }, or { command = "..." }

    [profiles.local-phoenix]
    kind = "phoenix"                    # Arize Phoenix's own API (default: "auto", asks)
    base_url = "http://localhost:6006"  # its key: api_key..., or $PHOENIX_API_KEY as Phoenix's

    [verdicts]                          # the annotate form's quick verdicts, by digit
    "1" = { name = "correctness", label = "correct", score = 1 }

TRACETUI_PROFILE, TRACETUI_BASE_URL and TRACETUI_API_KEY override the file. A file that holds a
key must be readable by its owner only (0600): one that is not is refused. Saving a project's key
rewrites the file through tomlkit, which keeps the user's comments, order and layout. There is
deliberately no --api-key flag: a key on the command line shows in `ps` and in shell history.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.core.secret import Secret, SecretLike
from tui.core.urls import is_loopback, split_url
from tui.model.verdicts import DEFAULT_VERDICTS, Verdict, read_verdicts

DEFAULT_PROFILE = "default"
KINDS = ("spec", "phoenix", "auto")  # the servers a profile can name (tui/api/kinds.py)
PHOENIX_KEY_ENV = "PHOENIX_API_KEY"  # where Phoenix's own clients read its key
COMMAND_TIMEOUT = 15.0


class ConfigError(Exception):
    """A problem with the config file, a profile, a key source or the base URL, found before any
    request is made. Its message never quotes a key."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Settings:
    """Everything the app needs to talk to one server, resolved from file, env and flags."""

    profile: str
    base_url: str | None
    api_key: Secret | None
    project_keys: dict[str, Secret]
    config_path: Path
    profiles: tuple[str, ...] = ()
    keymap: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    kind: str = "auto"
    verdicts: tuple[Verdict, ...] = DEFAULT_VERDICTS  # the annotate form's, by digit


def config_path(env: Mapping[str, str] = os.environ) -> Path:
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tracetui" / "config.toml"


def _holds_inline_keys(data: Mapping[str, Any]) -> bool:
    profiles = data.get("profiles")
    for profile in profiles.values() if isinstance(profiles, dict) else ():
        if not isinstance(profile, dict):
            continue
        if profile.get("api_key"):
            return True
        keys = profile.get("project_keys")
        if isinstance(keys, dict) and any(isinstance(v, str) for v in keys.values()):
            return True
    return False


def read_config(path: Path) -> dict[str, Any]:
    """The parsed file ({} if absent); refuses a file with keys that others can read."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}") from None
    # Imported here: with no file (settings from the environment) start-up need not load the
    # TOML parser (4 ms, before the first frame).
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        # The parser's message quotes no values, only positions.
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a TOML table")
    mode = stat.S_IMODE(path.stat().st_mode)
    if _holds_inline_keys(data) and mode & 0o077:
        from shlex import quote

        raise ConfigError(
            f"{path} holds API keys but can be read by group or others (mode {mode:04o}). "
            f"Fix it with: chmod 600 {quote(str(path))}"
        )
    return data


def _run_key_command(command: str, what: str) -> Secret:
    try:
        import shlex  # here, as subprocess: start-up needs them only for a key from a command
        import subprocess

        result = subprocess.run(  # noqa: S603 - the user's own configured command
            shlex.split(command),
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"The command for {what} could not run ({type(exc).__name__})") from None
    if result.returncode != 0:
        # Its output is not quoted: it might hold a key.
        raise ConfigError(f"The command for {what} failed with exit status {result.returncode}")
    value = result.stdout.strip()
    if not value:
        raise ConfigError(f"The command for {what} printed nothing")
    return Secret(value)


def _key_from(source: Any, what: str, env: Mapping[str, str]) -> Secret | None:
    """A key given inline, as {env = NAME} or as {command = "..."}."""
    if isinstance(source, str):
        return Secret(source) if source else None
    if isinstance(source, dict):
        if "env" in source:
            value = env.get(str(source["env"]))
            if not value:
                raise ConfigError(f"{what} is to come from ${source['env']}, which is not set")
            return Secret(value)
        if "command" in source:
            return _run_key_command(str(source["command"]), what)
    if source is None:
        return None
    raise ConfigError(f"{what} must be a string, {{ env = ... }} or {{ command = ... }}")


def load_settings(
    profile: str | None = None,
    base_url: str | None = None,
    env: Mapping[str, str] = os.environ,
    path: Path | None = None,
    kind: str | None = None,
) -> Settings:
    """Resolve a profile: flags over environment over file. A profile of kind "phoenix" with
    no key of its own takes $PHOENIX_API_KEY."""
    path = path or config_path(env)
    data = read_config(path)
    profiles = data.get("profiles") or {}
    if not isinstance(profiles, dict):
        raise ConfigError(f"{path}: [profiles] must be a table of profiles")
    name = profile or env.get("TRACETUI_PROFILE") or data.get("default_profile") or DEFAULT_PROFILE
    chosen = profiles.get(name)
    if chosen is None:
        if profiles and (profile or env.get("TRACETUI_PROFILE")):
            raise ConfigError(
                f"No profile {name!r} in {path}; profiles there: {', '.join(sorted(profiles))}"
            )
        chosen = {}
    if not isinstance(chosen, dict):
        raise ConfigError(f"{path}: profile {name!r} must be a table")

    url = base_url or env.get("TRACETUI_BASE_URL") or chosen.get("base_url")
    # No kind given: "auto", the server is asked whether it is a Phoenix (tui/api/kinds.py).
    server_kind = kind or chosen.get("kind") or "auto"
    if server_kind not in KINDS:
        raise ConfigError(
            f"Profile {name!r}: kind must be one of {', '.join(KINDS)}, not {server_kind!r}"
        )
    if env.get("TRACETUI_API_KEY"):
        api_key: Secret | None = Secret(env["TRACETUI_API_KEY"])
    elif chosen.get("api_key_env"):
        api_key = _key_from({"env": chosen["api_key_env"]}, f"the key of profile {name!r}", env)
    elif chosen.get("api_key_command"):
        api_key = _key_from(
            {"command": chosen["api_key_command"]}, f"the key of profile {name!r}", env
        )
    else:
        api_key = _key_from(chosen.get("api_key"), f"the key of profile {name!r}", env)
    if api_key is None and server_kind == "phoenix" and env.get(PHOENIX_KEY_ENV):
        api_key = Secret(env[PHOENIX_KEY_ENV])
    sources = chosen.get("project_keys") or {}
    if not isinstance(sources, dict):
        raise ConfigError(f"{path}: project_keys of {name!r} must be a table")
    project_keys: dict[str, Secret] = {}
    for project_id, source in sources.items():
        key = _key_from(source, f"the key of project {project_id!r}", env)
        if key is not None:
            project_keys[str(project_id)] = key

    warnings = []
    if isinstance(url, str):
        parts = split_url(url)  # None: the client refuses it, with the reason
        if parts and parts.scheme == "http" and parts.hostname and not is_loopback(parts.hostname):
            warnings.append(
                f"{parts.hostname} is reached over plain http://: the API key travels in clear"
            )
    keymap = {str(k): str(v) for k, v in (data.get("keymap") or {}).items()}
    try:
        verdicts = read_verdicts(data.get("verdicts"))
    except ValueError as problem:
        raise ConfigError(f"{path}: {problem}") from None
    return Settings(
        profile=name,
        base_url=url,
        api_key=api_key,
        project_keys=project_keys,
        config_path=path,
        profiles=tuple(sorted(profiles)),
        keymap=keymap,
        warnings=tuple(warnings),
        kind=server_kind,
        verdicts=verdicts,
    )


# -- writing -------------------------------------------------------------------------------------


def _child_table(parent: MutableMapping[str, Any], name: str, where: str) -> tuple[Any, bool]:
    """`parent[name]` as a table, made when missing (inline inside an inline table, as TOML
    requires; a header-less super table elsewhere, so that only `[a.b.c]` is written); whether
    it was made."""
    from tomlkit import inline_table, table
    from tomlkit.items import InlineTable

    existing = parent.get(name)
    if existing is None:
        made = inline_table() if isinstance(parent, InlineTable) else table(is_super_table=True)
        parent[name] = made
        return parent[name], True  # tomlkit may hand back a proxy rather than the table given
    if not isinstance(existing, MutableMapping):
        raise ConfigError(f"{where} must be a table")
    return existing, False


def save_project_key(path: Path, profile: str, project_id: str, key: SecretLike) -> None:
    """Store a project's key in a profile. The file is rewritten with mode 0600 and keeps its
    comments, order and layout: only the key's line (and tables it needs) are added."""
    read_config(path)  # refuses what reading would refuse: invalid TOML, keys others can read
    try:
        # Bytes, not read_text: its newline translation would turn a file's CRLFs into LFs.
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        text = ""
    # Imported here: writing is rare, and importing tomlkit takes ~17 ms that start-up, which
    # only reads, does without.
    import tomlkit
    from tomlkit.exceptions import ParseError
    from tomlkit.items import Table

    # tomlkit glues a table added after a last line without a newline onto that line.
    if text and not text.endswith("\n"):
        text += "\n"
    try:
        document = tomlkit.parse(text)
    except ParseError as exc:
        # Only the position: tomlkit's messages can quote what is in the file.
        raise ConfigError(
            f"{path} could not be read for writing (line {exc.line}, column {exc.col})"
        ) from None
    profiles, _ = _child_table(document, "profiles", f"{path}: [profiles]")
    chosen, _ = _child_table(profiles, profile, f"{path}: profile {profile!r}")
    keys, made = _child_table(chosen, "project_keys", f"{path}: project_keys of {profile!r}")
    keys[project_id] = key.get_secret_value()
    if made and isinstance(keys, Table):
        keys.add(tomlkit.nl())  # a blank line before whatever table follows, as people write
    written = tomlkit.dumps(document)
    if written.endswith("\n\n") and not text.endswith("\n\n"):
        written = written.rstrip("\n") + "\n"  # that blank line, at the end, is not wanted
    if "\r\n" in text and "\n" not in text.replace("\r\n", ""):
        # tomlkit ends the lines it adds with LF: a file written with CRLFs keeps them.
        written = written.replace("\r\n", "\n").replace("\n", "\r\n")
    write_private(path, written)


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` atomically, readable by its owner only (0600) from the start."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    import tempfile  # only when saving, never at start-up

    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".config-", suffix=".toml")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:  # the text's own line ends
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
