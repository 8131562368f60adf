"""Model APIs on loopback for the real Python stacks (tests/emitters/python): OpenAI's chat
completions and Responses API and Anthropic's Messages API, each answering once with a tool call
when tools are offered and nothing has come back from one yet, then with a fixed answer. Every
answer reports the usage below, so a test knows the tokens and cost one call must count."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OPENAI_MODEL = "gpt-4o-mini-2024-07-18"
ANTHROPIC_MODEL = "claude-3-5-haiku-20241022"
INPUT_TOKENS, OUTPUT_TOKENS = 120, 30  # every answer's usage
ANSWER = "Order 48213 shipped on Monday."
TOOL_NAME = "lookup_order"
TOOL_ARGUMENTS = {"order_id": 48213}
TOOL_RESULT = "shipped on Monday"
QUESTION = "Where is my order 48213?"


def _chat_completion(request: dict[str, Any]) -> dict[str, Any]:
    answered = any(m.get("role") == "tool" for m in request.get("messages", []))
    message: dict[str, Any] = {"role": "assistant", "content": ANSWER}
    finish = "stop"
    if request.get("tools") and not answered:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": TOOL_NAME, "arguments": json.dumps(TOOL_ARGUMENTS)},
                }
            ],
        }
        finish = "tool_calls"
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": OPENAI_MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": INPUT_TOKENS,
            "completion_tokens": OUTPUT_TOKENS,
            "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS,
        },
    }


def _response(request: dict[str, Any]) -> dict[str, Any]:
    items = request.get("input")
    answered = isinstance(items, list) and any(
        isinstance(i, dict) and i.get("type") == "function_call_output" for i in items
    )
    output: dict[str, Any] = {
        "type": "message",
        "id": "msg_1",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
    }
    if request.get("tools") and not answered:
        output = {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": TOOL_NAME,
            "arguments": json.dumps(TOOL_ARGUMENTS),
            "status": "completed",
        }
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": OPENAI_MODEL,
        "output": [output],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": request.get("tools") or [],
        "usage": {
            "input_tokens": INPUT_TOKENS,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": OUTPUT_TOKENS,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS,
        },
    }


def _anthropic_message(request: dict[str, Any]) -> dict[str, Any]:
    answered = any(
        isinstance(block, dict) and block.get("type") == "tool_result"
        for message in request.get("messages", [])
        if isinstance(message.get("content"), list)
        for block in message["content"]
    )
    content: list[dict[str, Any]] = [{"type": "text", "text": ANSWER}]
    stop = "end_turn"
    if request.get("tools") and not answered:
        content = [
            {"type": "tool_use", "id": "toolu_1", "name": TOOL_NAME, "input": TOOL_ARGUMENTS}
        ]
        stop = "tool_use"
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": ANTHROPIC_MODEL,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": INPUT_TOKENS,
            "output_tokens": OUTPUT_TOKENS,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        },
    }


ROUTES = {
    "/v1/chat/completions": _chat_completion,
    "/v1/responses": _response,
    "/v1/messages": _anthropic_message,
}


class StubModels(BaseHTTPRequestHandler):
    """POST to one of ROUTES: its answer as JSON; anything else 404. Every request's path is
    kept (`server.paths`), so a test can tell which API a stack called."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        path = self.path.split("?")[0]
        self.server.paths.append(path)  # type: ignore[attr-defined]
        route = ROUTES.get(path)
        if route is None:
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        data = json.dumps(route(json.loads(body or b"{}"))).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def stub_models() -> Iterator[tuple[str, list[str]]]:
    """The stub on a free loopback port: its base URL (no /v1) and the paths it was sent."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), StubModels)
    server.paths = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", server.paths  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
