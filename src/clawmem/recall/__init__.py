"""Answering a question: the recall pipeline, its search legs, their fusion and ranking, the
hits and what surrounds them (entities, links, the auto-inject context)."""
