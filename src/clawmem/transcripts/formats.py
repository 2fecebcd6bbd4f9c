"""Agent session transcripts (JSON Lines): which format a file is in, and the user and assistant
text of each line.

Two formats, detected per file from its first recognisable line (see docs/sessions.md):

- **OpenClaw** (``~/.openclaw/agents/<agent>/sessions/<session>.jsonl``): a header line
  ``{"type": "session", "id": …}``, then entries such as ``{"type": "message", "timestamp": …,
  "message": {"role": "user" | "assistant" | "toolResult", "content": [{"type": "text", …}]}}``,
  ``model_change``, ``custom``, ``compaction``.
- **Claude Code** (``~/.claude/projects/<project>/<session>.jsonl``): one object per line with
  ``type`` ``user`` | ``assistant`` | ``summary`` | ``system`` …, ``sessionId``, ``timestamp``
  and ``message.content`` as a string or a list of blocks (``text``, ``thinking``, ``tool_use``,
  ``tool_result``).

Only what a person or the agent *said* is kept: text blocks of user and assistant messages.
Tool calls, tool results, thinking, system lines, slash-command bookkeeping and sub-agent
(side-chain) lines are skipped. Text is whitespace-normalised and redacted here, before anything
else sees it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from clawmem.markdown.forgotten import Forgotten
from clawmem.text import untrusted_json
from clawmem.text.redact import redact

OPENCLAW = "openclaw"
CLAUDE_CODE = "claude-code"
FORMATS = (OPENCLAW, CLAUDE_CODE)

_CLAUDE_TYPES = {"user", "assistant", "summary", "system", "file-history-snapshot", "attachment"}
# Claude Code wraps slash commands and their output in these tags; they are bookkeeping, not talk.
_BOOKKEEPING = ("<command-name>", "<command-message>", "<local-command-stdout>", "<command-args>")
_REMINDER_OPEN, _REMINDER_CLOSE = "<system-reminder>", "</system-reminder>"
_BLANK_RUNS = re.compile(r"\n{3,}")


@dataclass(frozen=True)
class Message:
    line: int  # 1-based line of the transcript file
    role: str  # "user" | "assistant"
    text: str  # normalised and redacted
    at: str | None  # when it was said, ISO 8601 in UTC ("2026-01-05T10:00:00Z"), if known


@dataclass(frozen=True)
class LineInfo:
    """What one JSON line says about its file: its format and session id (either may be None)."""

    format: str | None
    session_id: str | None


def detect(obj: object) -> LineInfo:
    """The format a decoded line belongs to (None: this line does not tell)."""
    if not isinstance(obj, dict):
        return LineInfo(None, None)
    kind = obj.get("type")
    if kind == "session" and "id" in obj:
        return LineInfo(OPENCLAW, _session_id(obj.get("id")))
    if kind == "message" and isinstance(obj.get("message"), dict):
        return LineInfo(OPENCLAW, None)
    if kind in _CLAUDE_TYPES and ("sessionId" in obj or "uuid" in obj or "leafUuid" in obj):
        return LineInfo(CLAUDE_CODE, _session_id(obj.get("sessionId")))
    return LineInfo(None, None)


def message_of(obj: object, fmt: str, line: int) -> Message | None:
    """The user or assistant text of one decoded line in format ``fmt``, or None."""
    if not isinstance(obj, dict):
        return None
    if fmt == OPENCLAW:
        if obj.get("type") != "message":
            return None
    elif fmt == CLAUDE_CODE:
        if obj.get("type") not in ("user", "assistant"):
            return None
        if obj.get("isMeta") or obj.get("isSidechain") or obj.get("isCompactSummary"):
            return None  # caveats, sub-agent conversations, compaction summaries
    else:
        return None
    msg = obj.get("message")
    if not isinstance(msg, dict):
        return None
    role = msg.get("role")
    if role not in ("user", "assistant"):
        return None  # toolResult, system, …
    text = normalise(_text_of(msg.get("content")))
    if not text or text.startswith(_BOOKKEEPING):
        return None
    return Message(line, role, redact(text), _timestamp(obj.get("timestamp"), msg.get("timestamp")))


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        # Only text blocks: thinking, tool_use/toolCall, tool_result and images are not talk.
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
    return "\n\n".join(parts)


def normalise(text: str) -> str:
    """Whitespace tidied (trailing spaces, runs of blank lines, ends), reminders removed."""
    text = _without_reminders(text.replace("\r\n", "\n").replace("\r", "\n"))
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return _BLANK_RUNS.sub("\n\n", text).strip()


def _without_reminders(text: str) -> str:
    """``text`` without its ``<system-reminder>…</system-reminder>`` blocks, each from an opening
    tag to the first closing tag after it; an opening tag with none after it stays. In one pass:
    the lazy regular expression this replaces tried every opening tag against the rest of the
    text, and a message of 20,000 unclosed tags took two minutes to index."""
    out: list[str] = []
    at = 0
    while (start := text.find(_REMINDER_OPEN, at)) >= 0:
        end = text.find(_REMINDER_CLOSE, start + len(_REMINDER_OPEN))
        if end < 0:
            break  # no closing tag after this opening, so none after any later one either
        out.append(text[at:start])
        at = end + len(_REMINDER_CLOSE)
    out.append(text[at:])
    return "".join(out)


def _timestamp(line_ts: object, message_ts: object) -> str | None:
    for raw in (line_ts, message_ts):
        when = _parse_time(raw)
        if when is not None:
            # Not strftime: glibc writes year 1 as "1", not "0001", and readers of the day broke.
            return f"{when.year:04d}-{when:%m-%dT%H:%M:%S}Z"
    return None


def _parse_time(raw: object) -> datetime | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        seconds = raw / 1000 if raw > 1e11 else raw  # OpenClaw writes milliseconds
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(raw, str) and raw:
        try:
            when = datetime.fromisoformat(raw.replace("Z", "+00:00"))
            when = when if when.tzinfo else when.replace(tzinfo=UTC)
            # In UTC here: 0001-01-01T00:00+05:00 has no UTC day, and converting it later
            # raised OverflowError out of every index of the transcript's folder.
            return when.astimezone(UTC)
        except (ValueError, OverflowError):
            return None
    return None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _session_id(value: object) -> str | None:
    """A session id as the file states it, if it is one line of printable text: the episode page
    quotes it, and an id holding "\n## Retain\n- W @X: …" wrote that fact into memory."""
    text = _str(value)
    return text if text is not None and text.isprintable() and len(text) <= 200 else None


@dataclass(frozen=True)
class Parsed:
    """The complete lines of a stretch of a transcript."""

    messages: tuple[Message, ...]
    format: str | None
    session_id: str | None
    lines: int  # complete lines read
    consumed: int  # bytes of those lines (the next read starts here)
    bad_lines: tuple[int, ...]  # lines that are not JSON


def parse(
    data: bytes,
    *,
    first_line: int = 1,
    fmt: str | None = None,
    session_id: str | None = None,
    forgotten: Forgotten | None = None,
) -> Parsed:
    """Read the complete lines of ``data`` (a line still being written, without its newline, is
    left for the next read). ``fmt`` and ``session_id``: what earlier lines of the file said.
    ``forgotten``: the workspace's forgotten lines (markdown/forgotten.py): a message whose text
    is one of them is not read, whoever reads it (the index, flush, reflect, get)."""
    end = data.rfind(b"\n") + 1
    messages: list[Message] = []
    bad: list[int] = []
    pending: list[tuple[int, object]] = []  # lines before the format is known
    lines = data[:end].split(b"\n")[:-1] if end else []
    for i, raw in enumerate(lines):
        lineno = first_line + i
        if not raw.strip():
            continue
        try:
            obj = untrusted_json.loads(raw)
        except ValueError:  # not JSON, not UTF-8, or nested too deeply
            bad.append(lineno)
            continue
        info = detect(obj)
        if fmt is None and info.format is not None:
            fmt = info.format
            for n, earlier in pending:
                m = message_of(earlier, fmt, n)
                if m is not None:
                    messages.append(m)
            pending.clear()
        if session_id is None and info.session_id is not None and info.format == fmt:
            session_id = info.session_id
        if fmt is None:
            pending.append((lineno, obj))
            continue
        m = message_of(obj, fmt, lineno)
        if m is not None:
            messages.append(m)
    if forgotten:
        messages = [m for m in messages if not forgotten.holds(m.text)]
    return Parsed(tuple(messages), fmt, session_id, len(lines), end, tuple(bad))
