"""The derived index: the SQLite connection, the schema, the writes and the read queries."""
