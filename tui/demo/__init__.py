"""`tracetui demo`: demo data, its live feed (a simulated LLM app sending OTLP), the stub webhook
receiver and the prices the demo's calls are costed by.

May import: `tui.server` (it fills a store and runs the service), `tui.api` and `tui.ui` (it
opens the app on that service). The service never imports this package.
"""
