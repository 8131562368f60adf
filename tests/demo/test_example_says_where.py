"""The example script says where its traces went: with a project's key, that key's project
(the service routes them there whatever their resource says), not the project it names."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.otlp import new_project
from tests.support.service import RunningService


def run_example(service: RunningService, key: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")} | {
        "OTEL_EXPORTER_OTLP_ENDPOINT": service.base_url.removesuffix("/v1"),
        "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer {key}",
    }
    return subprocess.run(
        [sys.executable, "-m", "tui.examples.send_traces"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_with_a_project_key_it_names_the_keys_project(service: RunningService) -> None:
    name, key = new_project(service)  # its traces go into a project of its own (named its id)
    example = run_example(service, key)
    assert example.returncode == 0, example.stderr
    assert f"Sent 3 traces to project {name!r}" in example.stdout, example.stdout
    assert "send-traces-example" not in example.stdout


def test_with_the_workspace_key_it_names_the_project_the_traces_name(
    service: RunningService,
) -> None:
    example = run_example(service, service.keys.workspace)
    assert example.returncode == 0, example.stderr
    assert "Sent 3 traces to project 'send-traces-example'" in example.stdout, example.stdout


def test_without_a_key_it_does_not_name_a_key(tmp_path: object) -> None:
    """A server that asks for no key (Phoenix, say) and lists one project: the script names
    that project without claiming a key put the traces there."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            body = json.dumps({"data": [{"name": "default", "id": "p1"}]}).encode()
            self.send_response(200 if self.path == "/v1/projects" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")} | {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}"
        }
        example = subprocess.run(
            [sys.executable, "-m", "tui.examples.send_traces"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.shutdown()
    assert example.returncode == 0, example.stderr
    assert "to project 'default', the only project the server lists" in example.stdout
    assert "OTEL_EXPORTER_OTLP_HEADERS" not in example.stdout
