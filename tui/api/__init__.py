"""The tracing service client: async, tolerant of real servers' shapes, rate-limit aware.

This package never imports Textual (a test enforces it) and shares no code with `tui.server`.
"""

from tui.api.client import ApiClient, LogEntry, Page, Waiting, normalize_base_url
from tui.api.errors import (
    ApiError,
    BadResponse,
    Conflict,
    ConnectionFailed,
    FieldError,
    Forbidden,
    InvalidBaseUrl,
    NotFound,
    RateLimited,
    ServerError,
    TimedOut,
    Unauthorized,
    ValidationFailed,
)
from tui.api.models import Alert, Project, Span, Trace
from tui.api.pagination import NextPage

__all__ = [
    "Alert",
    "ApiClient",
    "ApiError",
    "BadResponse",
    "Conflict",
    "ConnectionFailed",
    "FieldError",
    "Forbidden",
    "InvalidBaseUrl",
    "LogEntry",
    "NextPage",
    "NotFound",
    "Page",
    "Project",
    "RateLimited",
    "ServerError",
    "Span",
    "TimedOut",
    "Trace",
    "Unauthorized",
    "ValidationFailed",
    "Waiting",
    "normalize_base_url",
]
