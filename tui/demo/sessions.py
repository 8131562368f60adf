"""The demo's sessions: which of a user's traces make one conversation, and, for the support
chatbot, what each trace of a session asks, so that a session read whole is one story.

A session is one user's traces within two hours. A support session follows one of the
SUPPORT_STORIES (picked by the session's id, as is where in the story it starts, so that every
question is asked): its first trace asks a question of the story after the greeting, the next
one the story's next question with what was said before as history, as a chat app sends the
whole conversation on every call. A user still there when the story has run out starts a new
session (the same id with `-2`, `-3`...) and a new story.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from tui.demo.phrases import ANSWERS, SUPPORT_STORIES

SESSION_MS = 2 * 3_600_000  # one user's traces within two hours make one session


@dataclass(frozen=True)
class Turn:
    """One trace of a support session: what the user asks now, and the turns before it
    (user, assistant), oldest first."""

    question: str
    history: tuple[tuple[str, str], ...]


def session_id(user: str, start_ms: int) -> str:
    return f"sess_{user}_{start_ms // SESSION_MS}"


def _story(session: str) -> tuple[tuple[str, str], tuple[str, ...]]:
    """The story of a session from the question it starts at, the same on every run (not
    Python's salted hash)."""
    pick = int.from_bytes(hashlib.blake2b(session.encode(), digest_size=4).digest(), "big")
    opener, questions = SUPPORT_STORIES[pick % len(SUPPORT_STORIES)]
    start = pick // len(SUPPORT_STORIES) % len(questions)
    return opener, questions[start:]


def support_turns(traces: Iterable[tuple[str, int, str]]) -> dict[str, tuple[str, Turn]]:
    """For each support trace (id, start in ms, user): its session id and its turn."""
    by_session: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for trace_id, start, user in traces:
        by_session[session_id(user, start)].append((start, trace_id))
    turns: dict[str, tuple[str, Turn]] = {}
    for session, members in by_session.items():
        members.sort()
        part, asked = 0, 0
        story = _story(session)
        for _, trace_id in members:
            opener, questions = story
            if asked == len(questions):  # the story is told: the next trace starts another
                part, asked = part + 1, 0
                story = _story(f"{session}-{part + 1}")
                opener, questions = story
            history = (opener, *((q, ANSWERS[q]) for q in questions[:asked]))
            named = session if part == 0 else f"{session}-{part + 1}"
            turns[trace_id] = (named, Turn(questions[asked], history))
            asked += 1
    return turns
