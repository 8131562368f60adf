"""Alerts that fire: evaluation on a schedule, states and events, signed webhooks with retries.

metrics (the metric grammar, p95, conditions: pure), drift (prompt drift: pure), evaluator (a
round over every alert), signing (Standard Webhooks), targets (where a webhook may go: the SSRF
guard), delivery (the async worker that sends, retries and records), payload (the event JSON),
and service (what the app holds: the evaluator and the worker together).
"""
