"""Process locks: one writer per workspace, one watcher per workspace; one implementation.

Indexing, retain, reflect and watch all write; they take ``.memory/write.lock``. The watch daemon
also holds ``.memory/watch.lock`` for its whole life. Both are OS-level locks (``flock`` on Unix,
``filelock``'s ``msvcrt`` lock on Windows), released by the kernel however the process dies, so a
crash never leaves a stale lock. On Unix the lock file is opened without following a link and
never truncated (files/safe_open.py): a lock file opened by name follows a link that a cloned
repository committed in its place. Beside each lock, ``<name>.owner`` names the holder (``pid N
(command)``) so that a waiting process can say whom it waits for and ``status`` can name the daemon.
The owner file is emptied (not deleted) on release: a file left naming a pid is a holder that was
killed, and the next holder reports that it took over from it.

The write lock is taken in turn. An OS lock polled by its waiters is not a queue: a holder that
releases and asks again at once (``retain`` in a loop) re-takes it before a waiter's next poll, and
the soak saw four such loops starve a ``reflect`` until it gave up after 60 s. So a writer first
takes ``write.lock.queue`` (the turnstile) and keeps it only while it waits for the write lock
itself: a holder that asks again queues behind the writer already waiting, whom it cannot pass,
and a lazy sync before a read (which never waits) yields to both.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawmem.errors import LockedError, StoreError
from clawmem.files import safe_open

# filelock (Windows only) is imported when a lock is first taken or probed: a read that finds
# nothing to sync (most recalls) never takes one, and importing it costs a cold start ~10-20 ms.

WRITE_LOCK = "write.lock"
WRITE_QUEUE = "write.lock.queue"  # the turnstile in front of it (see the module's docstring)


@dataclass(frozen=True)
class Owner:
    """Who a lock's owner file names: its pid (None if unreadable) and its line as written."""

    pid: int | None
    text: str


def _owner_path(lock_path: Path) -> Path:
    return lock_path.with_name(lock_path.name + ".owner")


def read_owner(lock_path: Path) -> Owner | None:
    """The holder named beside ``lock_path``; None when nobody is named (free, or never taken)."""
    try:
        raw = safe_open.read_bytes(_owner_path(lock_path), limit=4096)
        text = (raw or b"").decode("utf-8").strip()
    except (OSError, UnicodeDecodeError, StoreError, ValueError):
        return None
    if not text:
        return None
    words = text.split()
    pid: int | None = None
    if len(words) >= 2 and words[0] == "pid" and words[1].isdigit():
        pid = int(words[1])
    return Owner(pid, text)


class _OsLock:
    """An exclusive OS lock on the file at ``path``: ``flock`` on a descriptor opened without
    following a link (``safe_open.open_file``, no truncation); ``filelock`` where there is no
    ``fcntl`` (Windows)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._fallback: Any = None  # filelock.FileLock where there is no fcntl

    @property
    def is_locked(self) -> bool:
        if self._fallback is not None:
            return bool(self._fallback.is_locked)
        return self._fd is not None

    def acquire(self, timeout: float, poll_interval: float) -> bool:
        """Whether the lock was taken within ``timeout`` seconds (0: only if free now)."""
        try:
            import fcntl
        except ImportError:
            from filelock import FileLock, Timeout

            self._fallback = FileLock(str(self.path), thread_local=False)
            try:
                self._fallback.acquire(timeout=timeout, poll_interval=poll_interval)
            except Timeout:
                return False
            return True
        fd = safe_open.open_file(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(poll_interval)
                continue
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
            return True

    def release(self) -> None:
        if self._fallback is not None:
            self._fallback.release()
            return
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor releases the flock


class HeldLock:
    """A lock this process holds; ``release()`` it (idempotent). ``previous`` is the holder the
    owner file still named when we got the lock: a process that died holding it."""

    def __init__(self, lock: _OsLock, path: Path, previous: Owner | None) -> None:
        self._lock = lock
        self.path = path
        self.previous = previous

    def release(self) -> None:
        if not self._lock.is_locked:
            return
        try:
            # Emptied while still held, so it never erases the next holder's name.
            safe_open.overwrite(_owner_path(self.path), b"")
        except (OSError, StoreError, ValueError):
            pass
        self._lock.release()

    def __enter__(self) -> HeldLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def acquire(
    path: Path, *, timeout: float, purpose: str = "", poll_interval: float = 0.05
) -> HeldLock | None:
    """Take the lock at ``path`` within ``timeout`` seconds (0: only if free now), or None.

    OSError (a read-only or missing folder) propagates: the caller says what it needed it for;
    so does ``UnsafePathError`` (a link where the lock file should be).
    """
    # Any thread may release it: the watcher releases from another thread than the one that took it.
    lock = _OsLock(path)
    if not lock.acquire(timeout, poll_interval):
        return None
    previous = read_owner(path)
    if previous is not None and previous.pid == os.getpid():
        previous = None
    try:
        line = f"pid {os.getpid()} ({purpose or ' '.join(sys.argv[:2])})\n"
        safe_open.overwrite(_owner_path(path), line.encode("utf-8", "replace"))
    except (OSError, StoreError, ValueError):
        pass  # the lock itself holds; only the name shown to waiters is missing
    return HeldLock(lock, path, previous)


def is_held(path: Path) -> bool | None:
    """Whether a live process holds the lock at ``path`` (None: cannot tell, e.g. no permission).

    A probe: it takes the lock for an instant if it is free, so takers use a timeout above zero
    (the watcher waits up to a second) rather than failing on a probe's microsecond hold.
    """
    if not path.exists():
        return False
    if not os.access(path, os.W_OK):
        return None
    probe = _OsLock(path)
    try:
        if not probe.acquire(0, 0.05):
            return True
    except (OSError, StoreError):
        return None
    probe.release()
    return False


# --------------------------------------------------------------------------- the write lock
def acquire_write(memory_dir: Path, *, timeout: float, purpose: str = "") -> HeldLock | None:
    """The write lock in turn: through the turnstile (``WRITE_QUEUE``), within ``timeout``
    seconds in all (0: only if nobody holds it or waits for it now), or None."""
    t0 = time.monotonic()
    gate = _OsLock(memory_dir / WRITE_QUEUE)
    if not gate.acquire(timeout, 0.05):
        return None
    try:
        left = max(0.0, timeout - (time.monotonic() - t0))
        # Only the turnstile's holder polls the lock itself, so it can poll often: the lock
        # changes hands within 10 ms of its release.
        return acquire(memory_dir / WRITE_LOCK, timeout=left, purpose=purpose, poll_interval=0.01)
    finally:
        gate.release()


# A writer that waits longer than this for the lock says whom it waits for (``on_wait``):
# before, a retain hung 15 s and `index` showed a frozen "0/0" bar without a word.
WAIT_NOTICE_S = 1.0
# Where that notice goes: the CLI prints it on stderr; a library caller may set its own. None:
# nowhere (the core prints nothing itself).
on_wait: Callable[[str], None] | None = None


def _waiting_notice(memory_dir: Path, timeout: float) -> str:
    owner = read_owner(memory_dir / WRITE_LOCK)
    who = owner.text if owner else "another writer"
    return f"waiting for the write lock of {memory_dir}: held by {who} (up to {timeout:.0f} s)"


@contextmanager
def write_lock(memory_dir: Path, *, timeout: float = 60.0, purpose: str = "") -> Iterator[None]:
    path = memory_dir / WRITE_LOCK
    notice = None
    if on_wait is not None and timeout > WAIT_NOTICE_S:
        tell = on_wait
        notice = threading.Timer(WAIT_NOTICE_S, lambda: tell(_waiting_notice(memory_dir, timeout)))
        notice.daemon = True
        notice.start()
    try:
        safe_open.make_state_dir(memory_dir)
        held = acquire_write(memory_dir, timeout=timeout, purpose=purpose)
    except OSError as exc:  # a read-only or full .memory/: say so, not "internal error"
        raise StoreError(
            f"{path}: cannot take the write lock ({exc.strerror or exc})",
            hint="clawmem needs to write in .memory/ to change anything; check its permissions "
            "and free space (reads still work)",
        ) from None
    finally:
        if notice is not None:
            notice.cancel()
    if held is None:
        owner = read_owner(path)
        raise LockedError(
            f"{memory_dir}: the index is being written by "
            f"{owner.text if owner else 'another process'} (waited {timeout:.0f} s)",
            hint="wait for it to finish, or stop it; the lock is released when that process exits",
        )
    with held:
        yield


def try_write_lock(memory_dir: Path) -> HeldLock | None:
    """The lock if it is free right now and no writer waits for it, else None (read commands then
    skip their lazy sync)."""
    safe_open.make_state_dir(memory_dir)
    return acquire_write(memory_dir, timeout=0, purpose="clawmem (sync before a read)")
