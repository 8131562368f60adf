"""The Textual side: the app, its screens and widgets, the keymap and the command palette.

May import: `tui.core`, `tui.model`, `tui.api` and `tui.config`. Never `tui.server` or
`tui.demo`: the app reads every server through the client. Screens and widgets never import the
app module (it imports them); screens never import each other (they navigate through the app).
"""
