"""Transcripts that an agent's hook named (``clawmem flush``) and no configured folder holds.

A hook names one transcript by its path, and clawmem reads that file, no other file of its
folder. So that later syncs (``clawmem index``, ``watch``, the sync before a read) keep it and
``get`` reads its citations, the file is remembered in ``.memory/transcripts.json`` under the
``sessions/…`` name it is indexed and cited by: ``sessions/<project>/<session>.jsonl`` for Claude
Code and ``sessions/<session>.jsonl`` for OpenClaw, the names that configuring their usual
folders (``~/.claude/projects``, ``~/.openclaw/agents/<agent>/sessions``) would give, so that
adding the folder later changes no citation. Like the index, the file is derived: deleting
``.memory/`` forgets these transcripts until their next flush; their episode pages stay.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from stat import S_ISLNK, S_ISREG

from clawmem.errors import ClawmemError
from clawmem.files import safe_open
from clawmem.markdown.workspace import (
    INDEX_DIR,
    MAX_TRANSCRIPT_BYTES,
    TRANSCRIPT_PREFIX,
    FileEntry,
    Skipped,
)

REGISTRY = "transcripts.json"
VERSION = 1
SUFFIX = ".jsonl"

# registry file -> (size, mtime_ns, what it held): a sync locates every transcript it reads.
_cache: dict[str, tuple[int, int, dict[str, Path]]] = {}


def registry_path(root: Path) -> Path:
    return root / INDEX_DIR / REGISTRY


def exists(root: Path) -> bool:
    return registry_path(root).exists()


def load(root: Path) -> dict[str, Path]:
    """``sessions/…`` name -> the transcript's absolute path. A missing, unreadable or damaged
    registry reads as empty: it only adds to what the configured folders give."""
    path = registry_path(root)
    try:
        st = path.stat()
    except OSError:
        return {}
    hit = _cache.get(str(path))
    if hit is not None and hit[:2] == (st.st_size, st.st_mtime_ns):
        return dict(hit[2])
    try:
        entries = json.loads(safe_open.read_bytes(path) or b"")["transcripts"]
        found = {
            rel: Path(entry["path"])
            for rel, entry in entries.items()
            if isinstance(rel, str) and valid_name(rel) and Path(entry["path"]).is_absolute()
        }
    except (OSError, ValueError, TypeError, KeyError, AttributeError, ClawmemError):
        return {}
    _cache[str(path)] = (st.st_size, st.st_mtime_ns, found)
    return dict(found)


def valid_name(rel: str) -> bool:
    inner = PurePosixPath(rel[len(TRANSCRIPT_PREFIX) :])
    return (
        rel.startswith(TRANSCRIPT_PREFIX)
        and not inner.is_absolute()
        and ".." not in inner.parts
        and inner.suffix == SUFFIX
    )


def name_for(root: Path, path: Path, fmt: str | None, holder: Callable[[str], Path | None]) -> str:
    """The ``sessions/…`` name for the transcript at ``path``: the one it is registered under,
    else the one its agent's usual folder would give, made unique with a hash of the path when
    another file has that name already, registered or in a configured folder (``holder``: the
    file a configured folder gives that name, if any)."""
    registered = load(root)
    for rel, known in registered.items():
        if known == path:
            return rel
    if fmt == "claude-code" and path.parent.name:
        rel = f"{TRANSCRIPT_PREFIX}{path.parent.name}/{path.name}"
    else:
        rel = f"{TRANSCRIPT_PREFIX}{path.name}"
    other = registered.get(rel) or holder(rel)
    if other is not None and other != path:
        import hashlib  # here: the read path imports this module, and hashes nothing

        tag = hashlib.sha256(os.fsencode(path)).hexdigest()[:8]
        rel = f"{rel[: -len(SUFFIX)]}-{tag}{SUFFIX}"
    return rel


def register(root: Path, rel: str, path: Path) -> bool:
    """Remember ``path`` as ``rel``; False when it was already. Entries whose file is gone are
    dropped on the way. The caller holds the workspace's write lock."""
    from clawmem.files.atomic import write_atomic

    known = load(root)
    kept = {r: p for r, p in known.items() if r != rel and os.path.lexists(p)}
    if known.get(rel) == path and len(kept) == len(known) - 1:
        return False
    kept[rel] = path
    data = {
        "version": VERSION,
        "about": "transcripts named by agent hooks (clawmem flush); derived, safe to delete",
        "transcripts": {r: {"path": str(p)} for r, p in sorted(kept.items())},
    }
    write_atomic(registry_path(root), json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return True


def scan(
    root: Path,
    files: dict[str, FileEntry],
    skipped: list[Skipped],
    seen: set[tuple[int, int]],
) -> None:
    """Stat the registered transcripts into ``files`` (by name; ``skipped`` says what was left
    out and why), leaving out a file a configured folder holds (``seen``: their device and
    inode), which that folder's scan has under its own name. Reads no content, and imports
    nothing of the transcripts' formats: a read with nothing changed stays cheap."""
    for rel, path in load(root).items():
        try:
            st = path.lstat()
        except OSError:
            continue  # gone: its rows go with it, as for a transcript deleted from a folder
        if (st.st_dev, st.st_ino) in seen:
            continue
        if rel in files:
            skipped.append(Skipped(rel, "same name as a transcript of a sessions folder"))
        elif S_ISLNK(st.st_mode) or not S_ISREG(st.st_mode):
            skipped.append(Skipped(rel, f"{path} is no longer a regular file"))
        elif st.st_size > MAX_TRANSCRIPT_BYTES:
            skipped.append(Skipped(rel, f"{st.st_size:,} bytes is over the transcript cap"))
        else:
            files[rel] = FileEntry(rel, st.st_size, st.st_mtime_ns)
