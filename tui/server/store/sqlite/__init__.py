"""The SQLite store, the embedded default: `store.Store` over one database file (write-ahead
log, a connection per thread), with its own half of alerts and search, its statements (`sql`)
and its schema (`migrations`, versioned by PRAGMA user_version)."""
