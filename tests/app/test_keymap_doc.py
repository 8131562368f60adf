"""docs/keymap.md is generated from the bindings: it must say what the bindings say."""

from __future__ import annotations

from pathlib import Path

from textual.binding import Binding

from tui.ui.app import TraceTuiApp
from tui.ui.keymap import binding_ids
from tui.ui.keymap_doc import key_name, render, table

KEYMAP_DOC = Path(__file__).resolve().parents[2] / "docs" / "keymap.md"


def test_docs_keymap_is_what_the_bindings_say() -> None:
    assert KEYMAP_DOC.read_text(encoding="utf-8") == render(), (
        "docs/keymap.md differs from the bindings: regenerate it with `make docs`"
    )


def test_every_binding_id_is_in_the_doc() -> None:
    text = render(TraceTuiApp.BINDINGS)
    ids = binding_ids(TraceTuiApp.BINDINGS)
    assert len(ids) > 50, "too few ids: were the screens or widgets moved?"
    assert not [i for i in sorted(ids) if f"| `{i}` |" not in text]


def test_keys_are_spelled_as_people_type_them() -> None:
    assert key_name("slash") == "/"
    assert key_name("question_mark") == "?"
    assert key_name("ctrl+r") == "ctrl+r"
    assert key_name("enter") == "enter"
    assert key_name("up") == "up"


def test_a_table_row_has_the_id_keys_and_what_it_does() -> None:
    binding = Binding("slash,f", "filter", "Filter", id="x.filter", tooltip="Filter | rows")
    assert table([binding])[-1] == "| `x.filter` | `/` `f` | Filter — Filter \\| rows |"
