"""The flush log, ``.memory/flush.log``: one line per ``clawmem flush`` an agent's hook ran.

A hook's flush prints nothing and always exits 0 (it must never block the agent), so this log is
where it says what it did, or why it did nothing; ``clawmem status`` shows its last line.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

LOG = "flush.log"
LOG_MAX_BYTES = 256 * 1024  # then the older half goes: the log says what happened lately


def log(memory_dir: Path, line: str, event: str = "") -> None:
    """Append one line to ``.memory/flush.log`` (kept to about ``LOG_MAX_BYTES``)."""
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = f"{at} {f'[{event}] ' if event else ''}{' '.join(line.split())}\n"
    path = memory_dir / LOG
    try:
        if path.is_file() and path.stat().st_size > LOG_MAX_BYTES:
            keep = path.read_bytes()[-LOG_MAX_BYTES // 2 :]
            keep = keep[keep.find(b"\n") + 1 :]
            from clawmem.files.atomic import write_atomic

            write_atomic(path, keep)
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError:
        pass  # nowhere to say it: a hook stays silent


def last_flush(memory_dir: Path) -> dict | None:
    """The log's last line, for ``clawmem status``: {"at", "ok", "line"}."""
    try:
        with open(memory_dir / LOG, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 4096))
            tail = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    lines = [ln for ln in tail.splitlines() if ln.strip()]
    if not lines:
        return None
    last = lines[-1]
    at, _, rest = last.partition(" ")
    if rest.startswith("["):  # the event: "[PreCompact (auto)] flushed …"
        rest = rest[rest.find("] ") + 2 :]
    return {"at": at, "ok": rest.startswith("flushed "), "line": last}
