"""tracetui: a keyboard-first terminal app for browsing the traces of LLM applications."""

__version__ = "0.1.0"
