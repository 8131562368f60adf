"""An OpenAI-compatible endpoint on loopback for the real `openai` SDK: a fixed chat answer, a
tool call when tools are offered, or a stream of chunks with the usage in the last. The ingest
tests and the Phoenix tests send its calls through real instrumentations."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

MODEL = "gpt-4o-mini-2024-07-18"
USAGE = {
    "prompt_tokens": 12,
    "completion_tokens": 5,
    "total_tokens": 17,
    "prompt_tokens_details": {"cached_tokens": 4},
    "completion_tokens_details": {"reasoning_tokens": 2},
}


class StubOpenAI(BaseHTTPRequestHandler):
    """POST /v1/chat/completions: a fixed answer, a tool call when tools are offered, or a
    stream of chunks (usage in the last) when asked to stream."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if request.get("stream"):
            self.stream()
            return
        message: dict[str, Any] = {"role": "assistant", "content": "Hi there"}
        finish = "stop"
        if request.get("tools"):
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "lookup_order", "arguments": '{"order_id": 48213}'},
                    }
                ],
            }
            finish = "tool_calls"
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": USAGE,
        }
        self.send(json.dumps(body).encode(), "application/json")

    def stream(self) -> None:
        def chunk(delta: dict[str, Any], finish: str | None, usage: Any = None) -> bytes:
            body = {
                "id": "chatcmpl-2",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
                if usage is None
                else [],
                "usage": usage,
            }
            return b"data: " + json.dumps(body).encode() + b"\n\n"

        events = (
            chunk({"role": "assistant", "content": "Hi "}, None)
            + chunk({"content": "there"}, None)
            + chunk({}, "stop")
            + chunk({}, None, USAGE)
            + b"data: [DONE]\n\n"
        )
        self.send(events, "text/event-stream")

    def send(self, data: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass
