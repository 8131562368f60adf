"""Pure (no Textual): deltas written the way the app writes every figure (tui/model/formatting.py),
with their sign: `+1.2s`, `−300ms`, `+1,204`, `+$0.0031`, and `±0` for no change."""

from __future__ import annotations

import math

from tui.model import formatting as fmt

MINUS = "−"  # U+2212: as wide as +, and not read as a dash


def _signed(text: str, value: float) -> str:
    return ("+" if value > 0 else MINUS) + text


def duration(delta_ms: float | None) -> str:
    if delta_ms is None or not math.isfinite(delta_ms):
        return "–"
    if delta_ms == 0:
        return "±0"
    return _signed(fmt.duration(abs(delta_ms)), delta_ms)


def count(delta: float | None) -> str:
    if delta is None or not math.isfinite(delta):
        return "–"
    if delta == 0:
        return "±0"
    return _signed(fmt.count(abs(delta)), delta)


def cost(delta: float | None) -> str:
    if delta is None or not math.isfinite(delta):
        return "–"
    if abs(delta) < 1e-9:
        return "±0"
    return _signed(fmt.cost(abs(delta)), delta)


def seconds_phrase(delta_ms: float) -> str:
    """`6.2 s`, `850 ms`: a duration in words, for the summary's sentences."""
    value = abs(delta_ms)
    if value < 1000:
        return f"{value:.0f} ms"
    if value < 60_000:
        return f"{value / 1000:.1f} s"
    return fmt.duration(value)
