"""The collector pause and hold-out used when a big trace is read and shown."""

from __future__ import annotations

import gc

import pytest

from tui.core.gcpause import (
    collect_garbage,
    gc_paused,
    hold_out_of_collections,
    return_to_collections,
)


def test_the_pause_nests_and_restores_the_collector_even_on_error() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block does not re-enable early
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_held_out_objects_are_handed_back() -> None:
    kept = [[i] for i in range(1000)]
    hold_out_of_collections()
    try:
        assert gc.get_freeze_count() >= len(kept)
    finally:
        return_to_collections()
    assert gc.get_freeze_count() == 0


def test_one_holder_handing_back_keeps_what_another_holds_after_the_collection() -> None:
    """The trace list holds its traces out; a big trace opened over it is held out and handed
    back when closed: after the collection that follows, the list's are held out again."""
    listed = [[i] for i in range(1000)]
    trace_list, trace_screen = object(), object()
    hold_out_of_collections(trace_list)
    try:
        hold_out_of_collections(trace_screen)
        return_to_collections(trace_screen)
        assert gc.get_freeze_count() == 0  # everything collectable, for the collection
        collect_garbage()
        assert gc.get_freeze_count() >= len(listed)
        return_to_collections(object())  # something that held nothing hands back nothing
        assert gc.get_freeze_count() >= len(listed)
    finally:
        return_to_collections(trace_list)
    assert gc.get_freeze_count() == 0
    collect_garbage()
    assert gc.get_freeze_count() == 0
