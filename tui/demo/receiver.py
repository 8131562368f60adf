"""The demo's own webhook receiver: a tiny HTTP server on loopback that `tracetui demo` points
its alerts at, so that their webhooks are delivered (and listed as delivered) on a machine with
no other receiver.

It checks each webhook's signature the way any receiver should (the alert's secret from the
demo's store, the timestamp within five minutes), answers 204, or 401 to one that does not
verify, and keeps a count by event type. It never prints: the app owns the terminal.
"""

from __future__ import annotations

import hmac
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tui.server.alerts.signing import signature

MAX_BODY = 1024 * 1024
TOLERANCE_S = 300


class DemoReceiver:
    """Receives webhooks on 127.0.0.1 (a free port) until stop(); `secret_of` gives an alert's
    whsec_ secret by its id (None if unknown)."""

    def __init__(self, secret_of: Callable[[str], str | None]) -> None:
        self.secret_of = secret_of
        self.received: Counter[str] = Counter()
        self.rejected = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="tracetui-demo-receiver", daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/webhooks"

    def start(self) -> DemoReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def verify(self, headers: dict[str, str], body: bytes) -> bool:
        """Whether a webhook is signed by its alert's secret, recently."""
        try:
            event = json.loads(body)
            secret = self.secret_of(str(event["data"]["alert"]["id"]))
            stamp = int(headers.get("webhook-timestamp", ""))
        except (ValueError, KeyError, TypeError):
            return False
        if secret is None or abs(time.time() - stamp) > TOLERANCE_S:
            return False
        expected = signature(secret, headers.get("webhook-id", ""), stamp, body)
        offered = headers.get("webhook-signature", "").split(" ")
        return any(hmac.compare_digest(expected, sig) for sig in offered)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass  # the app owns the terminal

            def do_POST(self) -> None:
                try:
                    length = min(int(self.headers.get("content-length") or 0), MAX_BODY)
                except ValueError:
                    length = 0
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                if receiver.verify(headers, body):
                    receiver.received[json.loads(body).get("type", "?")] += 1
                    self.send_response(204)
                else:
                    receiver.rejected += 1
                    self.send_response(401)
                self.send_header("Content-Length", "0")
                self.end_headers()

        return Handler
