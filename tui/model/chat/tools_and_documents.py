"""Tool spans and retrieval spans, where the conventions compete field by field: a tool's
arguments from OTel GenAI (`gen_ai.tool.call.*`), the local service (`tool.arguments`,
`tool.result`) or OpenInference (`tool_call.function.*`), else the span's raw input and output;
a retriever's documents from GenAI's or OpenInference's attributes (`retrieval.documents`,
`reranker.*`) or its raw output, its query from theirs or its raw input. Each table lists the
spellings in order of preference: the first that holds a value wins.
"""

from __future__ import annotations

import math
from typing import Any

from tui.model.attributes import Node, Reader, at, is_index, leaf
from tui.model.chat.messages import Document, Found, ToolCall, ToolResult
from tui.model.chat.shapes import tool_content
from tui.model.chat.text import dump

# A raw input or output and the convention it was read from ("" when there is none).
Sourced = tuple[Any, str]


def read_tool_span(
    reader: Reader,
    tree: Node,
    found: Found,
    raw_in: Sourced,
    raw_out: Sourced,
) -> None:
    """A tool span: its name and call id, the arguments it got and the result it returned."""
    arguments: Sourced = (None, "")
    for path, convention in (
        ("gen_ai.tool.call.arguments", "OTel GenAI"),
        ("tool.arguments", "tracetui"),
        ("tool_call.function.arguments", "OpenInference"),
    ):
        value = reader.value(tree, path)
        if value is not None:
            arguments = (value, convention)
            break
    else:
        arguments = raw_in
    result: Sourced = (None, "")
    for path, convention in (
        ("gen_ai.tool.call.result", "OTel GenAI"),
        ("tool.result", "tracetui"),
    ):
        value = reader.value(tree, path)
        if value is not None:
            result = (value, convention)
            break
    else:
        result = raw_out
    name = reader.string(tree, "gen_ai.tool.name", "tool.name", "tool_call.function.name")
    call_id = reader.string(tree, "gen_ai.tool.call.id", "tool_call.id")
    if arguments[0] is not None or name:
        found.take("tool_call", ToolCall(name, reader.json(arguments[0]), call_id), arguments[1])
    if result[0] is not None:
        found.take(
            "tool_result", ToolResult(tool_content(reader, result[0]), call_id, name), result[1]
        )


def read_span_documents(reader: Reader, tree: Node, found: Found) -> bool:
    """The documents a span's attributes list, in the first spelling that has any; whether
    there were some."""
    for path, convention in (
        ("gen_ai.retrieval.documents", "OTel GenAI"),
        ("retrieval.documents", "OpenInference"),
        ("reranker.output_documents", "OpenInference"),
        ("reranker.input_documents", "OpenInference"),
    ):
        documents = read_documents(reader, at(tree, path))
        if documents:
            found.take("documents", documents, convention)
            return True
    return False


def read_retrieval_span(
    reader: Reader,
    tree: Node,
    found: Found,
    raw_in: Sourced,
    raw_out: Sourced,
) -> None:
    """A retrieval span: its query and the documents it found."""
    if not read_span_documents(reader, tree, found) and raw_out[0] is not None:
        documents = read_documents(reader, raw_out[0])
        if documents:
            found.take("documents", documents, raw_out[1])
        else:
            found.take("output_value", raw_out[0], raw_out[1])
    query = reader.string(tree, "gen_ai.retrieval.query.text", "reranker.query")
    if query is not None:
        found.take(
            "query", query, "OTel GenAI" if at(tree, "gen_ai.retrieval") else "OpenInference"
        )
    elif raw_in[0] is not None:
        value = reader.json(raw_in[0])
        text = (
            value
            if isinstance(value, str)
            else reader.string(reader.node(value), "query", "input", "question")
        )
        if text is not None:
            found.take("query", text, raw_in[1])
        else:
            found.take("input_value", value, raw_in[1])


def read_documents(reader: Reader, value: Any) -> list[Document]:
    """Retrieved documents: OpenInference's documents.N.document.{id,score,content,metadata},
    GenAI's [{id, score, content}], LangChain's [{page_content, metadata}], or plain text."""
    node = reader.node(value) if not isinstance(value, (list, str)) else None
    if node is not None and "documents" in node.children and not any(map(is_index, node.children)):
        value = node.children["documents"]
    documents = []
    for item in reader.items(value):
        item = leaf(item)
        if isinstance(item, str):
            documents.append(Document(item))
            continue
        node = reader.node(item)
        if node is None:
            continue
        inner = at(node, "document")
        if inner is not None:
            node = reader.node(inner) or node
        content = reader.first(node, "content", "page_content", "pageContent", "text")
        if content is not None and not isinstance(content, str):
            content = dump(content)
        metadata = reader.json(reader.value(node, "metadata"))
        documents.append(
            Document(
                content,
                reader.string(node, "id", "document_id", "doc_id", "source_id", "metadata.id"),
                _number(reader.first(node, "score", "relevance_score", "similarity", "distance")),
                metadata,
            )
        )
    return documents


def _number(value: Any) -> float | None:
    """A score as a finite float (a number or numeric text); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None
