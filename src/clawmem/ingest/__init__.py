"""Keeping the index in step with the workspace: indexing, sync planning, the journal and the
watcher, the embedding model's choice, retain, status and check."""
