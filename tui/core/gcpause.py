"""Keeping Python's cyclic garbage collector away from the objects of a big trace.

A 50,000-span trace is about a million small objects. Two costs follow, both measured:
- While it is read, every allocation counts towards the collector's thresholds, so it runs again
  and again, and its older generations walk every object already built. json.loads, the spans
  and the tree took 1.03 s with the collector running and 0.42 s with it paused.
- Once read, the trace sits in the collector's generations, and each later full or middle
  collection walks it again: 100-350 ms pauses that land on whatever the user does next.
None of these objects form reference cycles (reference counting frees them), so `gc_paused`
skips collections during the read, and `hold_out_of_collections` moves everything alive into
Python's permanent generation (gc.freeze) until `return_to_collections` hands it back (gc.unfreeze),
which the trace screen does when it closes, after letting go of the trace. The trace list
holds its loaded traces out too once there are thousands (a full collection walking 50,000 of
them took 100 ms).

The same walks cost the app's start-up objects (modules, classes): the first full collection
took some 50 ms, on the first trace list's first frame. So the app holds what start-up made out
of collections too (`hold_start_up`), until the first holder hands back.

A closed screen's widgets refer to one another (parent and children), so only the collector
frees them, at its next full collection, which may be long in coming; until then those few
thousand objects pin the memory pages the trace's reading went through (pages are handed back
only when empty: 50,000 spans open and closed left 35 MB more than before the trace, 13 MB
after a collection). So the trace screen calls `collect_garbage` once it has closed a big one.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block; nests, and restores what was there before."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# Who holds objects out of collections now (ids of screens): the permanent generation is one
# for the whole process, so one holder handing back must not hand back another's.
_holders: set[int] = set()


def hold_out_of_collections(holder: object = None) -> None:
    """Everything alive now is skipped by later collections (until `return_to_collections`)."""
    _holders.add(id(holder))
    gc.freeze()


def return_to_collections(holder: object = None) -> None:
    """Undo `hold_out_of_collections` for `holder`: frozen objects are collected normally again
    (if it held any); what others hold is held again by `collect_garbage`."""
    if id(holder) not in _holders:
        return
    _holders.discard(id(holder))
    gc.unfreeze()


def hold_start_up() -> None:
    """What start-up made, alive now (modules, classes, the app), is skipped by later
    collections: until a holder hands back (gc.unfreeze hands back everything: start-up's
    objects are then walked again, as before) or `let_go_of_start_up`. Called before the first
    screen of data is made, so no screen is held by it."""
    gc.collect(1)  # start-up's young garbage is freed, not held
    gc.freeze()


def let_go_of_start_up() -> None:
    """Undo `hold_start_up` (the app ends), unless a holder holds now: it hands everything back
    when it is done."""
    if not _holders:
        gc.unfreeze()


def collect_garbage() -> None:
    """A full collection now (tens of milliseconds with 50,000 traces listed); what other
    holders hold is held out again afterwards."""
    gc.collect()
    if _holders:
        gc.freeze()
