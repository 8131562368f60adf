"""A secret that never shows itself: what the config reads keys into (pydantic's SecretStr works
alike, but importing pydantic costs the first frame ~100 ms, and the config is read before it)."""

from __future__ import annotations

from typing import Protocol


class SecretLike(Protocol):
    """Anything that hands its value over only when asked (Secret, pydantic's SecretStr)."""

    def get_secret_value(self) -> str: ...


class Secret:
    """A string kept out of reprs, logs and tracebacks' locals (shown as **********)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('**********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if not hasattr(other, "get_secret_value"):
            return NotImplemented
        return bool(self._value == other.get_secret_value())

    def __hash__(self) -> int:
        return hash(self._value)


def as_secret(value: str | SecretLike) -> SecretLike:
    """`value` kept secret: a plain str is wrapped in a Secret, a SecretLike is kept as it is.
    Anything else is refused with its type only (never its value)."""
    if isinstance(value, str):
        return Secret(value)
    if not callable(getattr(value, "get_secret_value", None)):
        raise TypeError(f"A key must be a str or a secret, not {type(value).__name__}")
    return value
