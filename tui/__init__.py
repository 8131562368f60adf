"""tracetui: a keyboard-first terminal app for browsing the traces of LLM applications."""

import sys

__version__ = "0.1.0"

# httpx imports its command-line client (click, pygments: about 40 ms of start-up) unless that
# import fails, when it falls back to a stub. Nothing here uses that CLI, so the import is made
# to fail. (If httpx was imported already, this changes nothing.)
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None: "not importable"
