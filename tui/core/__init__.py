"""The foundations both the client and the app stand on: secrets that never print, URL checks,
lenient readers of untrusted numbers and times, the collector's pauses, and the alert rules'
vocabulary (metrics, conditions, drafts).

May import: the standard library and pydantic, nothing else of tracetui. The service
(`tui.server`) does not use it: the service and the client share no code.
"""
