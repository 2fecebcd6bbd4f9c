"""Writing a file another program may be writing at the same moment: compare-and-swap.

clawmem's write lock keeps its own writers apart, but a daily log is also written by editors,
agents keeping their own notes and scripts (``echo … >> memory/2025-11-27.md``), none of which
know that lock. A read-modify-rename loses whatever such a writer appended between the read and
the rename (at 100 appends a second, one line in six). So a write here:

* re-checks, just before it writes, that the file is still the one that was read (same inode)
  and still starts with the bytes that were read; lines appended since are kept, before the new
  ones, when the caller says they can come first (``may_follow``), otherwise it gives up and the
  caller reads the file again and redoes its edit (``None``);
* only ever appends, in place, at the end of the file, as every other writer of a log appends
  (``O_APPEND``): nothing another program appends can be lost, before or after. A file is never
  renamed over a log: a program holding the log open (a logger, ``{ echo a; sleep 1; echo b; }
  >> log``) would go on writing into the deleted file, and its lines were lost (3,967 of 4,044
  lines of a writer appending 250 lines a second beside a retain loop, issue 40);
* creates a missing file only if nobody created it meanwhile (a hard link, which fails when the
  name exists).

The check and the write hold ``flock`` on the file, so a writer that takes it too (``flock(1)``)
is kept out for those milliseconds; the others are why the write checks what changed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from clawmem.files.atomic import default_mode, fsync_dir, remove_stale_temps, temp_copy
from clawmem.files.safe_open import read_all

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# How long the write waits for another holder of the file's flock before it goes on regardless
# (the checks still guard it): a program that never lets go must not hang a retain.
FLOCK_WAIT_S = 2.0


@dataclass(frozen=True)
class Snapshot:
    """A file as one read saw it: its bytes (None: there was no file) and which file it was."""

    data: bytes | None
    dev: int = 0
    ino: int = 0


class TooLarge(Exception):
    """The file is over the size its reader allows (``read_snapshot``'s ``limit``)."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def read_snapshot(path: Path, limit: int | None = None) -> Snapshot:
    """Read ``path`` for a later ``write_if_unchanged``. A symbolic link is refused (``OSError``
    ELOOP): the caller decides first whether the path may be touched at all. So is anything but
    a regular file (EINVAL: a FIFO blocked the open until someone wrote to it, a device never
    ended). Over ``limit`` bytes it raises ``TooLarge`` before reading a byte, and reads no more
    than ``limit`` + 1 of a file that grows meanwhile: a log of gigabytes was read whole, then
    refused for its size."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return Snapshot(None)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if limit is None:
            data = read_all(fd)
        else:
            if st.st_size > limit:
                raise TooLarge(st.st_size)
            data = read_all(fd, limit + 1)
            if len(data) > limit:
                raise TooLarge(max(len(data), os.fstat(fd).st_size))
    finally:
        os.close(fd)
    return Snapshot(data, st.st_dev, st.st_ino)


@dataclass(frozen=True)
class Written:
    """What a write left in the file (``after``) and what it replaced (``before``, the lines
    another program appended meanwhile included): enough to take the write back (``take_back``)."""

    before: bytes | None  # None: the write created the file
    after: bytes


def write_if_unchanged(
    path: Path, snap: Snapshot, new: bytes, *, may_follow: Callable[[bytes], bool]
) -> Written | None:
    """Append to the file ``snap`` read what ``new`` adds to it (``new`` must start with the
    bytes read: a log is only ever appended to, never rewritten); None (nothing written) when
    another program changed it otherwise than by appending lines that ``may_follow`` accepts
    before the new ones."""
    remove_stale_temps(path)  # a killed write's copy (older versions renamed one into place)
    if snap.data is None:
        return Written(None, new) if _create_exclusive(path, new) else None
    old = snap.data
    if not new.startswith(old):
        raise ValueError(f"{path}: a write here only appends to the file")
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | _NOFOLLOW)
    except FileNotFoundError:
        return None
    try:
        with flocked(fd):
            extra = _appended(fd, snap)
            if extra is None or (extra and not may_follow(extra)):
                return None
            size = os.fstat(fd).st_size
            try:
                _write_all(fd, new[len(old) :])  # O_APPEND: at the end, whatever came before
                os.fsync(fd)
            except OSError:
                # A full disk can take part of the line: the file goes back as it was.
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise
            return Written(old + extra, old + extra + new[len(old) :])
    finally:
        os.close(fd)


def take_back(path: Path, written: Written) -> bool:
    """Undo ``written`` if the file is still exactly what it left (False: another program has
    written since, and the file stays as it is). For a write whose sequel failed (retain's
    index on a full disk): a failed retain leaves the log byte for byte. The file is cut back
    in place (or removed, if the write created it), never replaced."""
    try:
        fd = os.open(path, os.O_RDWR | _NOFOLLOW)
    except OSError:
        return False
    try:
        with flocked(fd):
            st = os.fstat(fd)
            if st.st_size != len(written.after) or os.pread(fd, st.st_size + 1, 0) != written.after:
                return False
            if written.before is None:
                os.unlink(path)
            elif written.after.startswith(written.before):
                os.ftruncate(fd, len(written.before))  # needs no space: works on a full disk
                os.fsync(fd)
            else:
                return False
    finally:
        os.close(fd)
    fsync_dir(path.parent)
    return True


def _appended(fd: int, snap: Snapshot) -> bytes | None:
    """What was appended to the open file ``fd`` since ``snap`` read it (b"": nothing), or None
    when it is another file now, or was changed otherwise than at its end."""
    old = snap.data or b""
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (snap.dev, snap.ino) or st.st_size < len(old):
        return None
    now = os.pread(fd, st.st_size + (1 << 16), 0)  # a daily log is small: compare it whole
    return now[len(old) :] if now.startswith(old) else None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@contextlib.contextmanager
def flocked(fd: int) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # Windows: no flock; the checks alone guard the write
        yield
        return
    deadline = time.monotonic() + FLOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                break
            time.sleep(0.005)
        except OSError:
            break  # a file system without flock
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)


def _create_exclusive(path: Path, data: bytes) -> bool:
    """Create ``path`` whole, unless another program created it first (False)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_copy(path, data, default_mode())
    try:
        os.link(tmp, path)  # fails when the name exists: an atomic create-if-absent
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links: create-if-absent by O_EXCL instead
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, default_mode())
        except FileExistsError:
            return False
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    fsync_dir(path.parent)
    return True
