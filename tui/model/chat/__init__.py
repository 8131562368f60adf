"""Pure (no Textual): a span's attributes and extra fields -> the conversation they record.

Reads every common spelling: OTel GenAI (`gen_ai.input.messages` with role and parts, and the
older flattened `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`), OpenInference
(`llm.input_messages.N.message.*`, `input.value`, `tool.*`, `retrieval.documents.N.document.*`),
Langfuse-style `input` / `output` (a string, an object or a list of messages in OpenAI,
Anthropic, Gemini or LangChain shapes), the Vercel AI SDK's `ai.prompt*`, `ai.response.*` and
`ai.toolCall.*`, and the local service's own `llm.prompt`, `tool.*` and
`retrieval.documents`. Nested objects, JSON strings and flattened dotted keys are read alike,
numbered keys in numeric order (10 after 9). What matches none of them gives None: the caller
shows the JSON tree instead, so nothing is ever lost.

Nothing here raises on hostile input: every read is bounded (keys looked at, items per list,
characters of JSON parsed; see tui/model/attributes.py) and nothing recurses.

The modules, by concern:
  messages.py             the conversation model (Conversation, Message, parts, documents)
                          and Found, where the readers gather it, the first to read a field first
  shapes.py               one message or part in any provider's shape; messages in a raw value
  genai.py                the OTel GenAI conventions, structured and flattened
  openinference.py        the OpenInference conventions
  vercel.py               the Vercel AI SDK's `ai.*` attributes
  tools_and_documents.py  tool and retrieval spans, where the conventions compete field by field
  extract.py              `conversation(...)`: the span's kind picks the readers, in order
  text.py                 a conversation as plain text (span search)
  trace_summary.py        a trace's input preview and facts (user, session, tags...)
"""

from tui.model.chat.extract import conversation
from tui.model.chat.messages import (
    Conversation,
    Document,
    Message,
    OtherPart,
    Part,
    TextPart,
    ToolCall,
    ToolResult,
)
from tui.model.chat.text import conversation_text, message_text, part_text
from tui.model.chat.trace_summary import preview, trace_facts, trace_preview

__all__ = [
    "Conversation",
    "Document",
    "Message",
    "OtherPart",
    "Part",
    "TextPart",
    "ToolCall",
    "ToolResult",
    "conversation",
    "conversation_text",
    "message_text",
    "part_text",
    "preview",
    "trace_facts",
    "trace_preview",
]
