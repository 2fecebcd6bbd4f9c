"""Answers that leave the machine say nothing about where things live on its disk.

A remote client gets workspace-relative paths (``.``, ``memory/…``), scope-qualified ones
(``team:``) and ``~`` for the server user's home, never an absolute path: in results, in errors, in
``memory_status`` and in the server's instructions. Each place the workspace knows (its root, its
read scopes, its transcript folders, the user's home) is replaced by the name a client may see; in
clawmem's own words (errors, ``degraded``, notes, status) any absolute path left is cut to its last
part. A note's own text keeps what its author wrote, but never the server's folders.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

# An absolute POSIX path in a message: a slash at the start of a word, then path characters.
ABSOLUTE = re.compile(r"(?<![\w.~:/-])/(?:[^\s/'\"`()\[\]<>,;]+/)*[^\s/'\"`()\[\]<>,;:]*")
# Fields whose strings are clawmem's own words, not a note's text.
MESSAGE_KEYS = frozenset(
    {"degraded", "notes", "empty_reason", "state", "reason", "note", "line", "watcher", "error"}
)


def places(
    root: Path, scopes: dict[str, Path], session_folders: list[Path]
) -> list[tuple[str, str]]:
    """(absolute prefix, what a remote client sees instead), longest first."""
    out: dict[str, str] = {}

    def add(path: Path, shown: str) -> None:
        for form in {str(path), str(path.resolve())}:
            if len(form) > 1:
                out.setdefault(form, shown)

    add(root, ".")
    for name, path in scopes.items():
        add(path, f"{name}:")
    for folder in session_folders:
        add(folder, "sessions")
    add(Path.home(), "~")
    return sorted(out.items(), key=lambda kv: -len(kv[0]))


def text(value: str, known: list[tuple[str, str]], *, ours: bool) -> str:
    """``value`` with every known place replaced; ``ours`` (clawmem's words): any absolute path
    left is cut to its last part."""
    for prefix, shown in known:
        if prefix in value:
            # A scope's name takes the slash after it (team:memory/x.md); the others keep it.
            after = (
                r"(?:/|(?=$|[\s'\"`:,;)\]]))" if shown.endswith(":") else r"(?=$|[/\s'\"`:,;)\]])"
            )
            value = re.sub(re.escape(prefix) + after, shown.replace("\\", "\\\\"), value)
    if ours:
        value = ABSOLUTE.sub(lambda m: "…/" + os.path.basename(m.group(0).rstrip("/")), value)
    return value


def answer(data: Any, known: list[tuple[str, str]], *, ours: bool = False) -> Any:
    """A tool's JSON with no absolute path: every string, keys' values recursively; the strings of
    ``MESSAGE_KEYS`` (and everything when ``ours``) are clawmem's words."""
    if isinstance(data, str):
        return text(data, known, ours=ours)
    if isinstance(data, list):
        return [answer(v, known, ours=ours) for v in data]
    if isinstance(data, dict):
        return {k: answer(v, known, ours=ours or k in MESSAGE_KEYS) for k, v in data.items()}
    return data
