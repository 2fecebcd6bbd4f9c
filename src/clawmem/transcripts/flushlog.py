"""The flush log, ``.memory/flush.log``: one line per ``clawmem flush`` an agent's hook ran.

A hook's flush prints nothing and always exits 0 (it must never block the agent), so this log is
where it says what it did, or why it did nothing; ``clawmem status`` shows its last line.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from clawmem.errors import ClawmemError
from clawmem.files import safe_open

LOG = "flush.log"
LOG_MAX_BYTES = 256 * 1024  # then the older half goes: the log says what happened lately


def _field(text: str) -> str:
    """One field of a log line: the hook's text (its event name, a path) may hold line breaks
    and control characters, which would forge lines of their own in the log (and in what
    ``status`` shows); they are written escaped (``\\n``), and ``]`` too in the event."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def format_line(at: str, line: str, event: str = "") -> str:
    event = _field(event).replace("]", "\\x5d")
    return f"{at} {f'[{event}] ' if event else ''}{_field(' '.join(line.split()))}\n"


def log(memory_dir: Path, line: str, event: str = "") -> None:
    """Append one line to ``.memory/flush.log`` (kept to about ``LOG_MAX_BYTES``), never
    through a link (files/safe_open.py)."""
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = format_line(at, line, event)
    path = memory_dir / LOG
    try:
        old = safe_open.read_bytes(path, limit=LOG_MAX_BYTES + 1)
        if old is not None and len(old) > LOG_MAX_BYTES:
            keep = old[-LOG_MAX_BYTES // 2 :]
            keep = keep[keep.find(b"\n") + 1 :]
            from clawmem.files.atomic import write_atomic

            write_atomic(path, keep)
        safe_open.append(path, text.encode("utf-8", "replace"))
    except (OSError, ClawmemError):
        pass  # nowhere to say it: a hook stays silent


def last_flush(memory_dir: Path) -> dict | None:
    """The log's last line, for ``clawmem status``: {"at", "ok", "line"}."""
    try:
        raw = safe_open.read_bytes(memory_dir / LOG, limit=4096)
    except (OSError, ClawmemError):
        return None
    if raw is None:
        return None
    tail = raw.decode("utf-8", "replace")
    lines = [ln for ln in tail.splitlines() if ln.strip()]
    if not lines:
        return None
    last = lines[-1]
    at, _, rest = last.partition(" ")
    if rest.startswith("["):  # the event: "[PreCompact (auto)] flushed …"
        rest = rest[rest.find("] ") + 2 :]
    return {"at": at, "ok": rest.startswith("flushed "), "line": last}
