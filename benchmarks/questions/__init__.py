"""The agent-memory question set: ``author.py`` (source), ``agent_memory.jsonl`` (built)."""
