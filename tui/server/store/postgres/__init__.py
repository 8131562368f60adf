"""The PostgreSQL store: the same TraceStore as the SQLite one (`tui.server.store`), for a team
that runs `tracetui serve` on a shared database, any number of replicas on one PostgreSQL.

May import: `tui.server.*` (the protocol, the rows, the ingest sums, the SQLite store's pure
helpers such as `store_keys.hash_key`) and psycopg / psycopg_pool. Nothing outside tui/server
imports it; within tui/server only whatever opens a store by its URL does, lazily, so that
psycopg stays an optional dependency (`pip install 'tracetui[postgres]'`).

Modules: `store` (PostgresStore: the pool, projects, traces, retention, bulk writes), `pool`
(connections, transactions, and how a driver error becomes StoreBusy / StoreUnavailable /
StoreUnreachable), `migrations` (the schema, versioned, under an advisory lock), `sql` (column
lists and statements), `ingest` (binary COPY and the per-trace locks), `alerts` and `keys` (the
alert tables and the API keys / Idempotency-Keys), `locks` (the advisory locks that keep replicas
from writing one trace, one project or one alert round at the same time).

Needs PostgreSQL 16 or later (the `IS JSON` predicate); tested on 18.
"""
