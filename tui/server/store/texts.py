"""The text `q` searches, indexed off ingest's path on SQLite, as ingest writes on PostgreSQL.

On SQLite, writing a trace's FTS5 row (and its share of the commit) as its body was written
was more than half of ingest's write, and one writer writes at a time, so it bounded ingest
(docs/benchmarks.md, "Where ingest's time goes"). So ingest writes the text to a plain table
of texts waiting for the index (trace_text_pending: a new trace's text, or a stored trace's
grown one), and the service's indexer (background.index_texts) moves what waits into the index
every INDEX_PERIOD_S, INDEX_BATCH texts per transaction (TraceStore.index_texts): in batches,
the FTS5 work costs a fifth of what it did body by body. The index lives in a file of its own
beside the database (sqlite/textfile.py), whose write lock only the indexer takes, so its
writes never hold ingest's (they held the one lock a third as long as ingest's writes did).
Every other part of a trace is there when its export is answered (listed, filtered, opened);
its text is found by `q` once indexed, within FINDABLE_WITHIN_S of the answer (docs/api.md),
which tests/service check under load and `make bench` measures (the search delay's p95 and
max).

On PostgreSQL the text is indexed as ingest writes it: deferring it moved the GIN keys' work
to an UPDATE of the trace's row that cost more than the keys saved (a row version written
again with every index of traces), and pg_trgm, where the server has it, makes the keys cheap
(postgres/migrations.py, version 8). So `index_texts` has nothing to do there, and a text is
found as soon as its export is answered.
"""

from __future__ import annotations

INDEX_BATCH = 2_000  # texts per indexing transaction
INDEX_PERIOD_S = 0.5  # how often the indexer looks for texts waiting
FINDABLE_WITHIN_S = 2.0  # the bound docs/api.md states, from an export's answer to `q`
