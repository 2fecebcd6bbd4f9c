"""Replacing a file so that a reader, or a crash, sees the old file or the new one, whole.

Every file clawmem writes in place (daily logs, entity pages, ``clawmem.toml``, the git hook, the
watcher's state, caches in ``.memory/``, converted models) goes through ``write_atomic`` or, for a
writer that fills the file itself, ``replacing``: the new content goes to a
temporary file in the same folder, is flushed and fsynced, and is renamed over the target; then
the folder is fsynced so that the rename itself survives a power cut.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from glob import escape as glob_escape
from pathlib import Path


def default_mode() -> int:
    # What open() would give a new file; mkstemp's 0600 would hide notes from their owner's tools.
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8, line endings untouched).

    ``mode``: the new file's permissions; by default an existing file keeps its own and a new
    one gets the usual ``0666 & ~umask``."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with replacing(path, mode=mode) as tmp, open(tmp, "wb") as fh:
        fh.write(raw)


@contextmanager
def replacing(path: Path, *, mode: int | None = None) -> Iterator[Path]:
    """A temporary path beside ``path`` for a writer that fills it itself (a converter writing a
    GGUF); when the block ends without an exception it is fsynced, given ``mode`` (as
    ``write_atomic``'s) and renamed over ``path``, else removed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = default_mode()
    remove_stale_temps(path)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def temp_copy(path: Path, raw: bytes, mode: int) -> Path:
    """``raw`` written and fsynced to a new temporary file beside ``path`` (``.NAME.XXXX.tmp``),
    with permissions ``mode``, for a writer that renames it into place itself after a last
    check (files/cas.py). Returns its path; the caller removes it if it does not rename it."""
    remove_stale_temps(path)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def remove_stale_temps(path: Path) -> None:
    """A writer killed between writing its temporary copy and the rename leaves that copy beside
    the file (``.NAME.XXXXXXXX.tmp``); the next write of the same file removes it. Writers of one
    workspace hold its write lock, so no such copy belongs to a write still in progress."""
    for stale in path.parent.glob(f".{glob_escape(path.name)}.*.tmp"):
        try:
            stale.unlink()
        except OSError:
            pass  # gone already, or not ours to remove: the write itself goes on


def fsync_dir(folder: Path) -> None:
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # Windows cannot open a folder; its rename is durable enough
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
