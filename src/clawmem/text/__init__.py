"""Text rules with no I/O: folding and the FTS query, time expressions, topics, redaction."""
