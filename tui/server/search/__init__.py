"""What a trace is found by beyond the spec's time window: the filters and sorts of
GET /v1/traces (`filters`: what a request asks, checked once), the text a trace is searched by
(`text`, read at ingest), and how a stored trace's user, session, tags and text grow as more of
its spans arrive (`stored`). The SQL both stores run is the store's (store/search.py, with each
backend's half in store/sqlite/search.py and store/postgres/search.py).
"""
