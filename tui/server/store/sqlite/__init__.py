"""The SQLite store: `store.Store` over one database file, with its migrations."""
