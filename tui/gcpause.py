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
which the trace screen does when it closes, after letting go of the trace.
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


def hold_out_of_collections() -> None:
    """Everything alive now is skipped by later collections (until `return_to_collections`)."""
    gc.freeze()


def return_to_collections() -> None:
    """Undo `hold_out_of_collections`: frozen objects are collected normally again."""
    gc.unfreeze()
