"""The client of tracing servers: async, tolerant of real servers' shapes, rate-limit aware, each
call bounded in size and time. The app holds a TraceSource (source.py), made by kinds.py for the
kind of server a profile names: the spec's (client.py) or Arize Phoenix's (phoenix/).

This package never imports Textual (a test enforces it) and shares no code with `tui.server`.
Its names are loaded on first use (PEP 562): the command line checks the base URL and the app
draws its first frame before httpx and pydantic are imported.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.api.base_url import (
        InvalidBaseUrl as InvalidBaseUrl,
    )
    from tui.api.base_url import (
        normalize_base_url as normalize_base_url,
    )
    from tui.api.client import (
        ApiClient as ApiClient,
    )
    from tui.api.errors import (
        ApiError as ApiError,
    )
    from tui.api.errors import (
        BadResponse as BadResponse,
    )
    from tui.api.errors import (
        Conflict as Conflict,
    )
    from tui.api.errors import (
        ConnectionFailed as ConnectionFailed,
    )
    from tui.api.errors import (
        DeadlinePassed as DeadlinePassed,
    )
    from tui.api.errors import (
        FieldError as FieldError,
    )
    from tui.api.errors import (
        Forbidden as Forbidden,
    )
    from tui.api.errors import (
        NotFound as NotFound,
    )
    from tui.api.errors import (
        NotOffered as NotOffered,
    )
    from tui.api.errors import (
        RateLimited as RateLimited,
    )
    from tui.api.errors import (
        ResponseTooLarge as ResponseTooLarge,
    )
    from tui.api.errors import (
        ServerError as ServerError,
    )
    from tui.api.errors import (
        TimedOut as TimedOut,
    )
    from tui.api.errors import (
        Unauthorized as Unauthorized,
    )
    from tui.api.errors import (
        ValidationFailed as ValidationFailed,
    )
    from tui.api.models import Alert as Alert
    from tui.api.models import AlertEvent as AlertEvent
    from tui.api.models import KeyInfo as KeyInfo
    from tui.api.models import Project as Project
    from tui.api.models import ProjectChange as ProjectChange
    from tui.api.models import RotatedSecret as RotatedSecret
    from tui.api.models import Span as Span
    from tui.api.models import Trace as Trace
    from tui.api.pages import (
        Page as Page,
    )
    from tui.api.pagination import NextPage as NextPage
    from tui.api.request_log import LogEntry as LogEntry
    from tui.api.source import (
        TraceSource as TraceSource,
    )
    from tui.api.transport import (
        Waiting as Waiting,
    )

_WHERE = {
    "InvalidBaseUrl": "base_url",
    "normalize_base_url": "base_url",
    "ApiClient": "client",
    "LogEntry": "request_log",
    "Page": "pages",
    "TraceSource": "source",
    "Waiting": "transport",
    "ApiError": "errors",
    "BadResponse": "errors",
    "Conflict": "errors",
    "ConnectionFailed": "errors",
    "DeadlinePassed": "errors",
    "FieldError": "errors",
    "Forbidden": "errors",
    "NotFound": "errors",
    "NotOffered": "errors",
    "RateLimited": "errors",
    "ResponseTooLarge": "errors",
    "ServerError": "errors",
    "TimedOut": "errors",
    "Unauthorized": "errors",
    "ValidationFailed": "errors",
    "Alert": "models",
    "AlertEvent": "models",
    "KeyInfo": "models",
    "Project": "models",
    "ProjectChange": "models",
    "RotatedSecret": "models",
    "Span": "models",
    "Trace": "models",
    "NextPage": "pagination",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'tui.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tui.api.{module}"), name)
    globals()[name] = value  # looked up once
    return value
