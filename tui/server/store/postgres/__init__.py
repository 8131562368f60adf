"""The PostgreSQL store: the same TraceStore as the SQLite one, for a team that runs
`tracetui serve` on a shared database, any number of replicas on one PostgreSQL.

May import: `tui.server.*` (the protocol, the rows, the statements both stores share, the ingest
sums) and psycopg / psycopg_pool. Nothing outside tui/server imports it; within tui/server only
whatever opens a store by its URL does (store/opening.py), lazily, so that psycopg stays an
optional dependency (`pip install 'tracetui[postgres]'`).

Modules: `store` (PostgresStore: the pool's use, the locks' places, what differs from SQLite),
`pool` (connections, transactions, and how a driver error becomes StoreBusy / StoreUnavailable /
StoreUnreachable), `migrations` (the schema, versioned in a table), `sql` (its own statements,
binary COPY's types), `ingest` (binary COPY and the per-trace locks), `alerts` and `search` (what
it reads its own way), `locks` (the advisory locks that keep replicas from writing one trace,
one project name, one Idempotency-Key or one alert round at the same time).

Needs PostgreSQL 16 or later (the `IS JSON` predicate); tested on 18.
"""
