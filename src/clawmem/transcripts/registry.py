"""Transcripts that an agent's hook named (``clawmem flush``) and no configured folder holds.

A hook names one transcript by its path, and clawmem reads that file, no other file of its
folder. So that later syncs (``clawmem index``, ``watch``, the sync before a read) keep it and
``get`` reads its citations, the file is remembered in ``.memory/transcripts.json`` under the
``sessions/…`` name it is indexed and cited by: ``sessions/<project>/<session>.jsonl`` for Claude
Code and ``sessions/<session>.jsonl`` for OpenClaw, the names that configuring their usual
folders (``~/.claude/projects``, ``~/.openclaw/agents/<agent>/sessions``) would give, so that
adding the folder later changes no citation. Like the index, the file is derived: deleting
``.memory/`` forgets these transcripts until their next flush; their episode pages stay.

The registry names files outside the workspace, so it is believed only when this user's clawmem
wrote it: it carries an HMAC of its entries and the workspace's path, keyed by a secret of the
user's own (``registry.key`` beside the trust store, mode 0600). A ``transcripts.json`` that a
cloned repository committed (naming, say, another project's transcripts) fails the check and
reads as empty, as a damaged one does.
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
from clawmem.text import untrusted_json

REGISTRY = "transcripts.json"
VERSION = 1
SUFFIX = ".jsonl"

# registry file -> (size, mtime_ns, what it held): a sync locates every transcript it reads.
_cache: dict[str, tuple[int, int, dict[str, Path]]] = {}


def registry_path(root: Path) -> Path:
    return root / INDEX_DIR / REGISTRY


def exists(root: Path) -> bool:
    return registry_path(root).exists()


def _user_key(*, create: bool) -> bytes | None:
    """This user's registry key (made on first use when ``create``); None when there is none,
    or it is not the user's own file, or others may read it."""
    import stat

    from clawmem.config.trust import store_path

    path = store_path().parent / "registry.key"
    try:
        st = os.lstat(path)
        own = stat.S_ISREG(st.st_mode) and not st.st_mode & 0o077
        if own and (not hasattr(os, "getuid") or st.st_uid == os.getuid()):
            key = safe_open.read_bytes(path)
            return key if key and len(key) >= 32 else None
        return None
    except FileNotFoundError:
        if not create:
            return None
    except (OSError, ClawmemError):
        return None
    import secrets

    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
    except FileExistsError:
        return _user_key(create=False)  # another process made it first
    except OSError:
        return None
    key = secrets.token_bytes(32)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    return key


def _mac(root: Path, transcripts: object, *, create: bool) -> str | None:
    """The HMAC that shows this user's clawmem wrote ``transcripts`` for the workspace ``root``."""
    key = _user_key(create=create)
    if key is None:
        return None
    import hashlib
    import hmac

    body = json.dumps([str(root.resolve()), transcripts], sort_keys=True, ensure_ascii=False)
    return hmac.new(key, body.encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()


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
        # Read as outside JSON: a cloned repository may commit it (nested 200,000 deep, every
        # index, status and recall of the clone was an internal error).
        data = untrusted_json.loads(safe_open.read_bytes(path) or b"")
        entries = data["transcripts"]
        mac = _mac(root, entries, create=False)
        if mac is None or not isinstance(data.get("mac"), str) or data["mac"] != mac:
            # Not written by this user's clawmem (a cloned repository's, or an older version's):
            # its paths are not followed. The next flush of each transcript registers it again.
            _cache[str(path)] = (st.st_size, st.st_mtime_ns, {})
            return {}
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
    transcripts = {r: {"path": str(p)} for r, p in sorted(kept.items())}
    data = {
        "version": VERSION,
        "about": "transcripts named by agent hooks (clawmem flush); derived, safe to delete",
        "transcripts": transcripts,
        "mac": _mac(root, transcripts, create=True),
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
