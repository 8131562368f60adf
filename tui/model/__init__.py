"""The pure model: spans into trees and rollups, attributes into conversations (every
convention), traces into metric series, formatting, and the one safe-text helper.

May import: `tui.core`, the client's data types (`tui.api.models`, `tui.api.span_table`,
`tui.api.annotation_records`) and rich's text objects. Never Textual and never any I/O:
everything here is tested without an app.
"""
