"""Reading the error bodies real APIs send: a message and the field details, from whichever
common shape the server used (`{"error": {"message", "details"}}`, FastAPI's `detail` list,
RFC 7807's `title` and `invalid_params`, a dict of field -> messages, plain text...)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_MESSAGE = 300


@dataclass(frozen=True)
class FieldError:
    """One field's validation problem, as the server described it."""

    field: str
    message: str


def clip(text: str) -> str:
    """`text` on one line, cut to MAX_MESSAGE characters."""
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def _text_of(value: Any) -> str | None:
    """A message out of a string, or of a dict holding message/detail/description/title."""
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, dict):
        for key in ("message", "detail", "description", "error_description", "title", "msg"):
            text = _text_of(value.get(key))
            if text:
                return text
        code = value.get("code") or value.get("type")
        if isinstance(code, str):
            return code
    if isinstance(value, list) and value:
        parts = [t for t in (_text_of(v) for v in value[:3]) if t]
        if parts:
            return "; ".join(parts)
    return None


def _field_name(item: dict[str, Any]) -> str:
    for key in ("field", "path", "param", "name", "pointer", "property", "attribute"):
        value = item.get(key)
        if isinstance(value, str) and value:
            return value.removeprefix("/").replace("/", ".")
        if isinstance(value, list) and value:
            return ".".join(str(v) for v in value)
    loc = item.get("loc")
    if isinstance(loc, list):
        parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
        return ".".join(parts) or "body"
    source = item.get("source")
    if isinstance(source, dict):
        return _field_name(source)
    return ""


def _field_errors(value: Any) -> list[FieldError]:
    """Field details in the shapes servers use: lists of dicts, or a dict of field -> messages."""
    if isinstance(value, dict):
        errors = []
        for field, messages in value.items():
            if isinstance(messages, list):
                text = "; ".join(str(m) for m in messages if isinstance(m, (str, int, float)))
            else:
                text = _text_of(messages) or str(messages)
            errors.append(FieldError(str(field), clip(text)))
        return errors
    if isinstance(value, list):
        errors = []
        for item in value:
            if isinstance(item, dict):
                field = _field_name(item)
                text = _text_of(item) or item.get("reason") or ""
                if field:
                    errors.append(FieldError(field, clip(str(text))))
        return errors
    return []


def parse_error_body(body: Any) -> tuple[str | None, list[FieldError]]:
    """(message, field errors) from the error bodies real APIs send."""
    if not isinstance(body, dict):
        return _text_of(body), _field_errors(body) if isinstance(body, list) else []
    error = body.get("error")
    fields: list[FieldError] = []
    for source in (
        error.get("details") if isinstance(error, dict) else None,
        error.get("fields") if isinstance(error, dict) else None,
        error.get("errors") if isinstance(error, dict) else None,
        body.get("errors"),
        body.get("detail") if isinstance(body.get("detail"), list) else None,
        body.get("invalid_params"),
        body.get("fields"),
    ):
        fields = _field_errors(source)
        if fields:
            break
    message = None
    for candidate in (
        error,
        body.get("message"),
        body.get("detail") if not isinstance(body.get("detail"), list) else None,
        body.get("error_description"),
        body.get("title"),
        body.get("errors"),
        body.get("detail"),
    ):
        message = _text_of(candidate)
        if message:
            break
    return message, fields
