"""Who a trace is for and which conversation it belongs to: its user, session and tags, read
from a span's attributes under every convention that carries them (docs/conventions.md).

session: `session.id` (OpenInference), `gen_ai.conversation.id` (OTel GenAI),
`langfuse.session.id`, `traceloop.association.properties.session_id`,
`ai.telemetry.metadata.sessionId` (Vercel AI SDK); then OpenInference's `metadata` (JSON text)
`session_id`, or `langfuse_session_id`.
user: `user.id`, `langfuse.user.id`, `enduser.id`, `traceloop.association.properties.user_id`,
`ai.telemetry.metadata.userId`; then `metadata`'s `user_id`, or `langfuse_user_id`.
tags: `tag.tags` (a list, or a JSON list as text), `langfuse.tags`, `langfuse.trace.tags`, and
`metadata`'s `tags` and `langfuse_tags`. (OpenInference's LangChain instrumentation writes a
run's metadata as `metadata`: where LangChain users put Langfuse's `langfuse_*` keys.)

The trace takes the first user and session found, its root span first, then its other spans in
order; its tags are the union of every span's. Values are text, cut to MAX_VALUE characters;
empty ones count as absent. Bounded: at most MAX_TAGS tags per trace.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tui.server.ingest.text_repair import loads_sound

MAX_VALUE = 200
MAX_TAGS = 50
MAX_METADATA = 100_000  # characters of `metadata` JSON parsed for a user or a session

SESSION_KEYS = (
    "session.id",
    "gen_ai.conversation.id",
    "langfuse.session.id",
    "traceloop.association.properties.session_id",
    "ai.telemetry.metadata.sessionId",
)
USER_KEYS = (
    "user.id",
    "langfuse.user.id",
    "enduser.id",
    "traceloop.association.properties.user_id",
    "ai.telemetry.metadata.userId",
)
TAG_KEYS = ("tag.tags", "langfuse.tags", "langfuse.trace.tags")
METADATA_USER_KEYS = ("user_id", "langfuse_user_id")
METADATA_SESSION_KEYS = ("session_id", "langfuse_session_id")
METADATA_TAG_KEYS = ("tags", "langfuse_tags")


class Associations(NamedTuple):
    user_id: str | None = None
    session_id: str | None = None
    tags: tuple[str, ...] = ()


def value_of(raw: Any) -> str | None:
    """An id as stored: text (a number as its text), stripped and cut; None when empty."""
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, (int, float)):
        raw = str(raw)
    if not isinstance(raw, str):
        return None
    text = raw.strip()[:MAX_VALUE]
    return text or None


def tags_of(raw: Any) -> list[str]:
    """Tags from a list, or from a JSON list as text (a plain text is one tag)."""
    if isinstance(raw, str):
        stripped = raw.strip()
        if stripped.startswith("["):
            try:
                raw = loads_sound(stripped)
            except (ValueError, RecursionError):  # too deep for the parser
                return []
        else:
            raw = [stripped]
    if not isinstance(raw, (list, tuple)):
        return []
    found = []
    for item in raw[:MAX_TAGS]:
        tag = value_of(item)
        if tag is not None:
            found.append(tag)
    return found


def metadata_of(attributes: dict[str, Any]) -> dict[str, Any]:
    """OpenInference's `metadata`: a JSON object as text (or already an object)."""
    raw = attributes.get("metadata")
    if isinstance(raw, str) and len(raw) <= MAX_METADATA and raw.lstrip().startswith("{"):
        try:
            raw = loads_sound(raw)
        except (ValueError, RecursionError):  # too deep for the parser
            return {}
    return raw if isinstance(raw, dict) else {}


def first_of(attributes: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        found = value_of(attributes.get(key))
        if found is not None:
            return found
    return None


def associations_in(attributes: dict[str, Any]) -> Associations:
    """The user, session and tags one span's attributes (as decoded) carry."""
    user = first_of(attributes, USER_KEYS)
    session = first_of(attributes, SESSION_KEYS)
    tags: list[str] = []
    for key in TAG_KEYS:
        if key in attributes:
            tags += tags_of(attributes[key])
    raw = attributes.get("metadata")
    # Parsed only when it may add something: a user or session still missing, or tags (the
    # text names them: a cheap look before parsing what LangChain puts on every span).
    if raw is not None and (user is None or session is None or may_hold_tags(raw)):
        metadata = metadata_of(attributes)
        user = user or first_of(metadata, METADATA_USER_KEYS)
        session = session or first_of(metadata, METADATA_SESSION_KEYS)
        for key in METADATA_TAG_KEYS:
            if key in metadata:
                tags += tags_of(metadata[key])
    return Associations(user, session, tuple(tags))


def may_hold_tags(metadata: Any) -> bool:
    return isinstance(metadata, dict) or (isinstance(metadata, str) and "tags" in metadata)


def combine(found: list[tuple[Associations, bool]]) -> tuple[Associations, bool]:
    """A trace's associations from its spans' (each with whether it is a root): the first
    user and session of a root, else of any span; the union of the tags, in order. Also says
    whether the user or session came from a root."""
    user = session = None
    from_root = False
    for roots in (True, False):
        for each, is_root in found:
            if is_root != roots:
                continue
            if user is None and each.user_id is not None:
                user, from_root = each.user_id, from_root or roots
            if session is None and each.session_id is not None:
                session, from_root = each.session_id, from_root or roots
    return Associations(user, session, union((), (t for a, _ in found for t in a.tags))), from_root


def union(first: tuple[str, ...] | list[str], more: Any) -> tuple[str, ...]:
    """`first` then the tags of `more` not in it, MAX_TAGS at most."""
    seen = dict.fromkeys(first)
    for tag in more:
        if len(seen) >= MAX_TAGS:
            break
        seen.setdefault(tag)
    return tuple(seen)
