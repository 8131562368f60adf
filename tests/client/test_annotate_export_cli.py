"""`tracetui annotate` and `tracetui export` against the real local service (its annotations,
the service lane's), run as the command line runs them: the profile's base URL and key from the
environment, the id or the lines on stdout, one line on stderr and a non-zero exit for what is
wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.app.test_annotate_service import add_project, annotations_of, new_key, served
from tests.support.service import RunningService
from tui.cli import main


@pytest.fixture
def project(
    service: RunningService, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> tuple[str, list[str], str]:
    if not served(service):
        pytest.skip(
            "LOUD SKIP: this service keeps no annotations: the service lane (lane-as) is not "
            "merged into this branch yet; these tests run against it once it is"
        )
    name, ids, session = add_project(service)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no config file of the user's
    monkeypatch.setenv("TRACETUI_BASE_URL", service.base_url)
    monkeypatch.setenv("TRACETUI_API_KEY", new_key(service, name, "eval job"))
    return name, ids, session


def test_annotate_writes_on_a_trace_a_span_and_a_session_and_prints_the_id(
    service: RunningService,
    project: tuple[str, list[str], str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    name, ids, session = project
    assert (
        main(["annotate", ids[0], "--name", "correctness", "--label", "wrong", "--score", "0"]) == 0
    )
    first = capsys.readouterr().out.strip()
    assert (
        main(
            [
                "annotate",
                ids[0],
                "--span",
                "0002retrieve0000",
                "--name",
                "note",
                "--note",
                "stale index",
                "--project",
                name,
                "--kind",
                "LLM",
            ]
        )
        == 0
    )
    capsys.readouterr()
    for label in ("v1", "v2"):  # the same identifier: the second write updates the first
        assert (
            main(
                ["annotate", ids[1], "--name", "eval", "--label", label, "--identifier", "nightly"]
            )
            == 0
        )
    assert (
        main(
            [
                "annotate",
                "--session",
                session,
                "--project",
                name,
                "--name",
                "note",
                "--note",
                "looped",
            ]
        )
        == 0
    )
    stored = annotations_of(service, name, ids[0])
    assert {(a["id"] == first, a["name"], a["author"], a["annotator_kind"]) for a in stored} == {
        (True, "correctness", "eval job", "HUMAN"),
        (False, "note", "eval job", "LLM"),
    }
    assert [(a["label"]) for a in annotations_of(service, name, ids[1])] == ["v2"]
    with service.client() as api:
        sessions = api.get(f"projects/{name}/annotations", params={"session_id": session}).json()
    assert [a["explanation"] for a in sessions["data"]] == ["looped"]


@pytest.mark.parametrize(
    ("argv", "says", "code"),
    [
        (["annotate", "--name", "x", "--label", "y"], "give the TRACE_ID", 2),
        (["annotate", "t", "--name", "x", "--score", "high"], "--score: A finite number", 2),
        (["annotate", "t", "--name", "x"], "--label: Give a label, a score or a note", 2),
        (["annotate", "--session", "s", "--name", "x", "--label", "y"], "needs --project", 2),
    ],
)
def test_annotate_says_what_is_wrong_in_one_line(
    project: tuple[str, list[str], str],
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    says: str,
    code: int,
) -> None:
    assert main(argv) == code
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_annotate_a_trace_of_another_project_fails_in_one_line(
    project: tuple[str, list[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    name, _, _ = project
    assert main(["annotate", "f" * 32, "--project", name, "--name", "x", "--label", "y"]) == 1
    err = capsys.readouterr().err
    assert "no trace with this id in this project" in err and err.count("\n") == 1


def test_export_writes_the_matching_traces_with_input_output_and_annotations(
    service: RunningService,
    project: tuple[str, list[str], str],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    name, ids, _ = project
    main(["annotate", ids[1], "--name", "root_cause", "--label", "retriever"])
    main(["annotate", ids[1], "--name", "note", "--note", "the 2023 policy"])
    capsys.readouterr()
    assert (
        main(
            [
                "export",
                "--project",
                name,
                "--query",
                "label:root_cause=retriever",
                "--format",
                "jsonl",
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    (line,) = [json.loads(text) for text in out.splitlines()]
    assert line["trace_id"] == ids[1] and line["name"] == "checkout" and line["status"] == "ok"
    assert line["input"] == "question 1: where is my refund?"
    assert line["output"] == "answer 1: it is on its way"
    assert sorted((a["name"], a["author"]) for a in line["annotations"]) == [
        ("note", "eval job"),
        ("root_cause", "eval job"),
    ]
    assert "1 traces written to stdout" in err

    path = tmp_path / "set.jsonl"
    assert main(["export", "--project", name, "--format", "jsonl", "--output", str(path)]) == 0
    lines = [json.loads(text) for text in path.read_text().splitlines()]
    assert [line["trace_id"] for line in lines] == ids
    assert [len(line["annotations"]) for line in lines] == [0, 2, 0]
    assert main(["export", "--project", name, "--format", "jsonl", "--output", str(path)]) == 2
    assert "it already exists" in capsys.readouterr().err


def test_export_refuses_a_query_that_does_not_read(
    project: tuple[str, list[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    name, _, _ = project
    assert main(["export", "--project", name, "--query", "score:x", "--format", "jsonl"]) == 2
    assert "--query: score:x: write score:NAME<NUMBER" in capsys.readouterr().err
