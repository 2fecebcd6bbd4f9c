"""Conversation transcripts: their formats (OpenClaw, Claude Code) and the configured folders."""
