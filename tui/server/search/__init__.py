"""Searching a project's traces beyond the spec's time window: the filters and sorts of
GET /v1/traces (`filters`: what a request asks, checked; `queries`: the SQL both stores run),
the text a trace is searched by (`text`), and the sessions and users of a project (`groups`).
The stores' halves are `sqlite` (for store.Store) and `postgres` (for PostgresStore).
"""
