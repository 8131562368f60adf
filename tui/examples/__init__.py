"""Examples to run with `python -m tui.examples.NAME` (they need the [examples] extra)."""
