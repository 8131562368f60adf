"""Each demo support session is one coherent conversation: its traces, in order, ask the
questions of one story once each, every trace carrying what was said before it as history
(never a greeting about shoes followed by a question about shipping to Norway)."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from typing import Any

import pytest

from tui.demo.data import populate
from tui.demo.phrases import ANSWERS, SUPPORT_QUESTIONS, SUPPORT_STORIES
from tui.demo.sessions import support_turns
from tui.server.store.sqlite.store import Store

NOW = 1_795_000_000_000


def said(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The text turns of a message list: (role, text), tool calls and results left out."""
    return [
        (m["role"], part["content"])
        for m in messages
        for part in m["parts"]
        if part.get("type") == "text"
    ]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[list[tuple[str, str]]]]:
    """Each support session's traces, oldest first: what the reply's model call was sent."""
    store = Store(tmp_path_factory.mktemp("sessions") / "demo.sqlite3")
    populate(store, seed=7, now=NOW, scale=0.4, big_traces=False)
    db = sqlite3.connect(store.path)
    rows = db.execute(
        "SELECT t.session_id, t.id, s.attributes FROM traces t JOIN spans s"
        " ON s.trace_id = t.id AND s.name = 'draft_reply'"
        " WHERE t.project_id = 'proj_support' ORDER BY t.started_at, s.started_at"
    )
    found: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(dict)
    for session, trace_id, attributes in rows:
        # A reply retried after a failure is sent the same messages again: one per trace.
        messages = json.loads(json.loads(attributes)["gen_ai.input.messages"])
        found[session][trace_id] = said(messages)
    return {session: list(traces.values()) for session, traces in found.items()}


def test_every_support_question_is_asked(
    sessions: dict[str, list[list[tuple[str, str]]]],
) -> None:
    asked = {turns[-1][1] for traces in sessions.values() for turns in traces}
    assert asked == set(SUPPORT_QUESTIONS)


def test_there_are_sessions_of_several_traces(
    sessions: dict[str, list[list[tuple[str, str]]]],
) -> None:
    assert sum(len(traces) >= 2 for traces in sessions.values()) >= 10


def test_each_session_tells_one_story_in_order(
    sessions: dict[str, list[list[tuple[str, str]]]],
) -> None:
    for session, traces in sessions.items():
        asked = [turns[-1][1] for turns in traces]  # what each trace asks now
        assert len(set(asked)) == len(asked), (session, asked)  # nothing asked twice
        stories = [s for s in SUPPORT_STORIES if set(asked) <= set(s[1])]
        assert stories, (session, asked)  # every question of one story
        opener, questions = stories[0]
        start = questions.index(asked[0])
        assert asked == list(questions[start : start + len(asked)]), (session, asked)  # in order
        for number, turns in enumerate(traces):
            # The greeting, then every earlier question with its answer, then the new one.
            earlier = [("user", q) for q in asked[:number]]
            expected = [("user", opener[0]), ("assistant", opener[1])]
            for (_, question), answered in zip(earlier, asked[:number], strict=True):
                expected += [("user", question), ("assistant", ANSWERS[answered])]
            assert turns == [*expected, ("user", asked[number])], (session, number, turns)


def test_a_user_still_there_after_the_story_starts_a_new_session() -> None:
    hour = 3_600_000
    traces = [(f"t{n}", 10 * 2 * hour + n * 60_000, "carol") for n in range(7)]
    turns = support_turns(traces)
    sessions = [turns[f"t{n}"][0] for n in range(7)]
    # One bucket of two hours, told as consecutive sessions: sess_carol_10, then -2, -3...
    names = list(dict.fromkeys(sessions))
    assert names[0] == "sess_carol_10" and len(names) >= 3
    assert names[1:] == [f"sess_carol_10-{n}" for n in range(2, len(names) + 1)]
    assert sessions == sorted(sessions, key=names.index)  # never back to an earlier one
    for name in names:
        told = [turns[f"t{n}"][1] for n in range(7) if sessions[n] == name]
        story = next(s for s in SUPPORT_STORIES if told[0].question in s[1])
        start = story[1].index(told[0].question)
        assert [t.question for t in told] == list(story[1][start : start + len(told)])
        assert [len(t.history) for t in told] == list(range(1, len(told) + 1))
