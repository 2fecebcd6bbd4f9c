"""The agent-memory question set: ``authored.jsonl`` (written by hand, gold lines named by quotes)
and ``agent_memory.jsonl`` (built by ``build.py``: quotes resolved to line ranges, checked)."""
