"""The quick verdicts of the config file's `[verdicts]` table (tui/model/verdicts.py): the
defaults without one, a table read by digit, and every mistake refused with the entry named."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.config import ConfigError, load_settings
from tui.model.verdicts import DEFAULT_VERDICTS, Verdict


def settings_of(tmp_path: Path, text: str) -> object:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_settings(env={}, path=path)


def test_without_a_table_the_defaults_mark_correct_wrong_and_ask_for_a_root_cause(
    tmp_path: Path,
) -> None:
    settings = load_settings(env={}, path=tmp_path / "absent.toml")
    assert settings.verdicts == DEFAULT_VERDICTS
    assert [(v.key, v.title, v.complete) for v in settings.verdicts] == [
        ("1", "correctness: correct", True),
        ("2", "correctness: wrong", True),
        ("3", "root cause…", False),
    ]


def test_a_table_names_the_verdicts_by_digit_in_digit_order(tmp_path: Path) -> None:
    settings = settings_of(
        tmp_path,
        '[verdicts]\n"2" = { name = "helpful", score = 0 }\n'
        '"0" = { name = "triage", label = "flaky" }\n"1" = { name = "helpful", score = 1 }\n',
    )
    assert settings.verdicts == (  # type: ignore[attr-defined]
        Verdict("1", "helpful", None, 1.0),
        Verdict("2", "helpful", None, 0.0),
        Verdict("0", "triage", "flaky", None),
    )


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ('verdicts = "1"', "must be a table of digits"),
        ('[verdicts]\n"a" = { name = "x" }', "'a': a verdict's key is one digit"),
        ('[verdicts]\n"12" = { name = "x" }', "one digit"),
        ('[verdicts]\n"1" = "correct"', "'1' must be a table"),
        ('[verdicts]\n"1" = { label = "x" }', "name is 1 to 64"),
        ('[verdicts]\n"1" = { name = "x", colour = "red" }', "unknown field 'colour'"),
        ('[verdicts]\n"1" = { name = "x", score = "high" }', "score is a number"),
        ('[verdicts]\n"1" = { name = "x", score = true }', "score is a number"),
        ('[verdicts]\n"1" = { name = "x", score = nan }', "score is a number"),
        ('[verdicts]\n"1" = { name = "x", label = "" }', "label is 1 to 200"),
    ],
)
def test_a_mistake_is_refused_naming_the_entry(tmp_path: Path, table: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        settings_of(tmp_path, table)
