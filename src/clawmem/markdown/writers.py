"""Who wrote each fact: ``.clawmem/writers``, the workspace's attribution log.

``clawmem history`` answers "who said this, and when?". Git knows the commit of a line, but not
whether it came from ``clawmem retain`` on a laptop, an agent's MCP token, a flush or a person's
editor. So every fact clawmem itself writes gets one line here — tracked by git with the
Markdown, merged as a union, appended only — keyed like the forgotten lines by the SHA-256 of the
fact's line (whitespace folded), never its text:

    9b74c989…  memory/2026-11-28.md  2026-11-28T10:02:11Z  mcp:laptop

A fact with no entry was written by hand (or before this log existed); ``history`` then says
what git blame says of it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from clawmem.errors import UnsafePathError
from clawmem.files import safe_open
from clawmem.markdown.forgotten import key, read_nofollow

WRITERS = ".clawmem/writers"
_HEADER = (
    "# clawmem: who wrote each fact clawmem wrote (retain, correct, an MCP token, flush, import):\n"
    "# SHA-256 of the line, its file, when (UTC) and the writer. Read by `clawmem history`.\n"
)


@dataclass(frozen=True)
class Written:
    path: str
    at: str  # ISO 8601, UTC
    writer: str


def record(root: Path, line: str, path: str, writer: str, now: datetime | None = None) -> None:
    """Append who wrote ``line`` (a fact's line as written in ``path``). Best effort: a log that
    cannot be written (a link, a read-only folder) never fails the write it describes."""
    when = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    safe = " ".join(writer.split()) or "unknown"  # one line, whatever a token's name holds
    entry = f"{key(line)}  {path}  {when}  {safe}\n"
    folder = root / WRITERS.split("/")[0]
    try:
        if folder.is_symlink():
            return
        folder.mkdir(exist_ok=True)
        fd = safe_open.open_file(root / WRITERS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        with os.fdopen(fd, "ab") as f:
            if os.fstat(f.fileno()).st_size == 0:
                entry = _HEADER + entry
            f.write(entry.encode("utf-8"))
    except (OSError, UnsafePathError):  # the record never fails the write it describes
        return


def lookup(root: Path) -> dict[str, list[Written]]:
    """Every recorded write, by line key, oldest first."""
    try:
        raw = read_nofollow(root / WRITERS)
    except (OSError, UnsafePathError):
        return {}
    out: dict[str, list[Written]] = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        parts = line.split(maxsplit=3)
        if line.startswith("#") or len(parts) != 4 or len(parts[0]) != 64:
            continue
        out.setdefault(parts[0].lower(), []).append(Written(parts[1], parts[2], parts[3]))
    return out
