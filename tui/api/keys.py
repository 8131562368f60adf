"""The keys a client holds: a default key and one per project, each kept as a secret from the
moment it arrives (a plain str is wrapped at once), put on a request only as it is sent, and
scrubbed from any text a server echoes back."""

from __future__ import annotations

from collections.abc import Generator, Mapping

import httpx

from tui.core.secret import SecretLike, as_secret

DEFAULT_KEY = "(default)"  # the name of the default key in rate budgets and pacing


class BearerAuth(httpx.Auth):
    """Sets the header at send time, so no plain key sits in a variable of the caller's frames."""

    def __init__(self, key: SecretLike | None) -> None:
        self._key = key

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self._key is not None:
            request.headers["Authorization"] = "Bearer " + self._key.get_secret_value()
        yield request

    def __repr__(self) -> str:
        return "BearerAuth(**********)"


class Keys:
    """The default key and the project keys, by project id; shows only which projects have one."""

    def __init__(
        self,
        default: str | SecretLike | None = None,
        by_project: Mapping[str, str | SecretLike] | None = None,
    ) -> None:
        self._default = None if default is None else as_secret(default)
        self._by_project = {
            project_id: as_secret(key) for project_id, key in (by_project or {}).items()
        }
        # Keys and signing secrets a server handed over (a new key, a rotated secret): never
        # sent by this client, but scrubbed like its own from anything a server echoes.
        self._seen: list[SecretLike] = []

    def __repr__(self) -> str:
        return f"Keys(default={self._default is not None}, projects={self.projects()})"

    def projects(self) -> list[str]:
        """The projects with a key of their own, sorted."""
        return sorted(self._by_project)

    def set(self, project_id: str, key: str | SecretLike) -> None:
        self._by_project[project_id] = as_secret(key)

    def remember(self, secret: SecretLike) -> None:
        """Scrub `secret` from every text as the held keys are."""
        self._seen.append(secret)

    def name_for(self, project_id: str | None) -> str:
        """Which key a request for `project_id` uses: the project's id, or DEFAULT_KEY."""
        return project_id if project_id in self._by_project else DEFAULT_KEY

    def key_for(self, project_id: str | None) -> SecretLike | None:
        if project_id is not None and project_id in self._by_project:
            return self._by_project[project_id]
        return self._default

    def auth_for(self, project_id: str | None) -> BearerAuth:
        return BearerAuth(self.key_for(project_id))

    def redact(self, text: str) -> str:
        """`text` with every key held here replaced by [redacted]."""
        for key in (self._default, *self._by_project.values(), *self._seen):
            if key is not None:
                secret = key.get_secret_value()
                if len(secret) >= 4 and secret in text:
                    text = text.replace(secret, "[redacted]")
        return text
