"""What was forgotten stays forgotten: the workspace's list of forgotten lines.

``clawmem forget`` removes lines from the Markdown, but a line can come back: a clone that still
has it merges it in, a transcript clawmem does not own still holds the message, an index rebuilt
from an old checkout reads it again. So forget also records each line it forgets in
``.clawmem/forgotten`` — a file of the workspace, tracked by git like the Markdown and merged as
a union — by the SHA-256 of its text (whitespace folded), never the text itself:

    # clawmem forget: lines forgotten here; ...
    9b74c9897bac770ffc029102a200c5de0ef5b8c4f1f0e0a1b7a6b0f6a2d3c4e5  memory/2025-11-12.md  2026-11-28

A line whose text hashes to an entry never reaches the index (Markdown and transcripts), recall,
a page reflect or flush writes, or a file the merge driver writes. The one rule is ``key``.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from clawmem.errors import UnsafePathError
from clawmem.files import safe_open
from clawmem.markdown.lines import lines_with_ends

FORGOTTEN = ".clawmem/forgotten"  # workspace-relative
_HEADER = (
    "# clawmem forget: lines forgotten in this workspace, by the SHA-256 of their text\n"
    "# (whitespace folded), never the text. Lines that hash to one of these are kept out of the\n"
    "# index, recall, generated pages and merges. Deleting an entry lets that line back in.\n"
)


# A line that is only the Markdown's structure, with nothing of its own to forget: a Retain
# heading (the grammar's, ATX or setext), a code fence, a thematic break or setext underline, a
# table's delimiter row, a marker of clawmem's. A tombstone hides every line of its text in the
# workspace, so one for "## Retain" (a section forgotten with its heading, or a list a clone
# committed) left every fact out of the next rebuild, and the merge driver dropped the heading
# from every log it merged. Such a line is blanked where it was forgotten, never tombstoned, and
# no tombstone hides one.
_STRUCTURE = re.compile(
    r"(?:#{1,6} )?retain(?: #*)?|(?:`{3,}|~{3,})[^`]*|(?:[-*_=] ?){3,}"
    r"|\|?(?: ?:?-+:? ?\|)+(?: ?:?-+:? ?)?|<!-- ?clawmem:[^>]*-->",
    re.IGNORECASE,
)


def is_structure(text: str) -> bool:
    """Whether the line is only structure (``_STRUCTURE``), its whitespace folded."""
    return _STRUCTURE.fullmatch(" ".join(text.split())) is not None


def key(text: str) -> str:
    """The tombstone of a line or message: SHA-256 of its text with whitespace folded, so a
    line re-indented or re-wrapped by a merge is still the same line."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Forgotten:
    """The forgotten lines of one workspace (their keys)."""

    keys: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.keys)

    def holds(self, text: str) -> bool:
        return (
            bool(self.keys)
            and bool(text.strip())
            and key(text) in self.keys
            and not is_structure(text)
        )

    def blank(self, text: str) -> str:
        """``text`` with every forgotten line made empty: line numbers (and so citations) stay."""
        if not self.keys:
            return text
        lines = text.split("\n")
        changed = False
        for i, line in enumerate(lines):
            if self.holds(line.rstrip("\r")):
                lines[i] = "\r" if line.endswith("\r") else ""
                changed = True
        return "\n".join(lines) if changed else text

    def drop(self, text: str) -> str:
        """``text`` without its forgotten lines (the merge driver's output)."""
        if not self.keys:
            return text
        # Lines as forget numbered and hashed them (\r\n, \r, \n: markdown/lines.py): a line
        # holding a \f or U+2028 is one line, whose hash is the one recorded.
        kept = [ln for ln in lines_with_ends(text) if not self.holds(ln.rstrip("\r\n"))]
        return "".join(kept)


_CACHE: dict[str, tuple[tuple[int, int], Forgotten]] = {}


def load(root: Path) -> Forgotten:
    """The workspace's forgotten lines (none when the file is absent). Read again only when the
    file changed: every sync that parses a file asks."""
    path = root / FORGOTTEN
    try:
        st = os.lstat(path)
    except OSError:
        return Forgotten()
    stamp = (st.st_mtime_ns, st.st_size)
    cached = _CACHE.get(str(path))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        raw = read_nofollow(path)
    except (OSError, UnsafePathError):  # a link from a clone lists nothing, and is not read
        return Forgotten()
    keys = set()
    for line in raw.decode("utf-8", "replace").splitlines():
        first = line.split(maxsplit=1)[0] if line.strip() else ""
        if len(first) == 64 and not line.startswith("#"):
            keys.add(first.lower())
    found = Forgotten(frozenset(keys))
    _CACHE[str(path)] = (stamp, found)
    return found


def read_nofollow(path: Path) -> bytes:
    """The file's bytes, never through a link (the file or its folder): the list is shared
    through git, and a link in a clone must not make clawmem read elsewhere."""
    if path.parent.is_symlink():
        raise OSError(f"{path.parent} is a symbolic link")
    fd = safe_open.open_file(path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as f:
        return f.read()


def append(root: Path, text: str) -> None:
    """Append ``text`` to the list (created with its header), never through a link: appends
    only, so a list another clone merged in is never rewritten."""
    folder = root / FORGOTTEN.split("/")[0]
    if folder.is_symlink():
        raise OSError(f"{folder} is a symbolic link")
    folder.mkdir(exist_ok=True)
    path = root / FORGOTTEN
    fd = safe_open.open_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    with os.fdopen(fd, "ab") as f:
        if f.tell() == 0 and os.fstat(f.fileno()).st_size == 0:
            text = _HEADER + text
        f.write(text.encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())


def entries(lines: list[tuple[str, str]], today: date) -> str:
    """The entries that record ``lines`` ((text, where) pairs) as forgotten: what ``append``
    writes. A line that is only structure gets none (``is_structure``)."""
    return "".join(
        f"{key(text)}  {where}  {today.isoformat()}\n"
        for text, where in lines
        if not is_structure(text)
    )
