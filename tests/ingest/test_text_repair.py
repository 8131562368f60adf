"""The text repair of decoding (ingest/text_repair.py) on its own: what becomes U+FFFD, what is
left alone, and bodies that are not messages still refused."""

from __future__ import annotations

import json

import pytest
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tui.server.ingest.text_repair import load_json, parse_protobuf, repaired, sound


def test_lone_surrogates_and_nul_become_replacements_and_pairs_stay() -> None:
    body = b'{"k\\ud83d": ["a\\u0000b", "\\ud83d\\ude00", "\\udc00\\ud800", "plain \\\\u0000"]}'
    assert load_json(body) == {"k\ufffd": ["a\ufffdb", "😀", "\ufffd\ufffd", "plain \\u0000"]}


def test_undecodable_bytes_and_a_bom_are_read() -> None:
    assert load_json(b'{"a": "x\xff\xc3y"}') == {"a": "x\ufffd\ufffdy"}
    assert load_json(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}
    assert load_json('{"a": "é"}'.encode("utf-16")) == {"a": "é"}


def test_a_document_as_deep_as_the_parser_allows_is_repaired_without_recursion() -> None:
    depth = 900
    body = ("[" * depth + '"\\u0000"' + "]" * depth).encode()
    node = load_json(body)
    for _ in range(depth):
        node = node[0]
    assert node == "\ufffd"


def test_keys_that_repair_alike_keep_the_last_value_and_the_order() -> None:
    halves = [("b", 1), ("a" + chr(0xD800), 2), ("a" + chr(0xDC00), 3), ("c", 4)]
    assert list(repaired(dict(halves)).items()) == [
        ("b", 1),
        ("a\ufffd", 3),
        ("c", 4),
    ]


def test_sound_text_is_returned_as_it_is() -> None:
    text = "nothing to repair: é 😀 \x1b \ufffd"
    assert sound(text) is text


@pytest.mark.parametrize("body", [b"\xff" * 16, b"\x0a\x05\x0a\x03\xed\xa0"])
def test_a_body_that_is_no_message_is_still_refused(body: bytes) -> None:
    with pytest.raises(DecodeError):
        parse_protobuf(ExportTraceServiceRequest, body)


def test_json_that_is_not_json_is_still_refused() -> None:
    with pytest.raises(ValueError):
        load_json(b'{"a": "\\ud83d"')
    with pytest.raises(json.JSONDecodeError):
        load_json(b'{"a": "raw control \x01"}')
