"""One writer per workspace.

Indexing, retain, reflect and watch all write; they take ``.memory/write.lock`` (an OS-level lock
through ``filelock``, released by the kernel if the process dies, so a crash never leaves a stale
lock). The holder's pid and command are written beside it so a waiting process can say who it is
waiting for.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from .errors import LockedError


def _holder(info: Path) -> str:
    try:
        return info.read_text(encoding="utf-8").strip() or "another process"
    except OSError:
        return "another process"


@contextmanager
def write_lock(memory_dir: Path, *, timeout: float = 60.0, purpose: str = ""):
    memory_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(memory_dir / "write.lock"))
    info = memory_dir / "write.lock.owner"
    try:
        lock.acquire(timeout=timeout)
    except Timeout:
        raise LockedError(
            f"{memory_dir}: the index is being written by {_holder(info)} (waited {timeout:.0f} s)",
            hint="wait for it to finish, or stop it; the lock is released when that process exits",
        ) from None
    try:
        try:
            info.write_text(f"pid {os.getpid()} ({purpose or ' '.join(sys.argv[:2])})\n", "utf-8")
        except OSError:
            pass
        yield
    finally:
        lock.release()


def try_write_lock(memory_dir: Path):
    """The lock if it is free right now, else None (read commands then skip their lazy sync)."""
    memory_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(memory_dir / "write.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return None
    return lock
