"""Rewriting a page (an entity page, ``bank/opinions.md``, an episode page) that another program
may be writing at the same moment, without losing its lines.

A page whose generated section changes cannot only be appended to (``cas.py``, which daily logs
and ``MEMORY.md`` use): its new version is written beside it and renamed over it. A program that
holds the page open for writing (an agent's ``>> bank/entities/Peter.md``, a logger) would go on
writing into the replaced file after the rename, and its lines were lost. So a rewrite here:

* is not done while another process holds the page open for writing (Linux: its descriptors in
  ``/proc``, with their open flags; elsewhere this check finds nobody): ``HeldOpen``, and the
  caller leaves the page for a later run;
* holds ``flock`` on the page while it compares it with what the plan read (bytes and inode:
  ``Changed`` when they differ) and renames the new version over it, so a writer that takes it
  too waits;
* keeps what a program appended to the old file between that comparison and the rename: the
  bytes past what was read are appended to the new file (``Rewritten.kept``). That append can
  fail (a full disk) after the rename, when those bytes are left only in the replaced file: so
  the old file keeps a second name (a hard link beside it) until they are in the new one, and
  if they cannot be, it is renamed back, every line in it, and the rewrite is an ``OSError``
  with nothing written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from clawmem.files.atomic import fsync_dir, write_atomic
from clawmem.files.cas import flocked
from clawmem.files.safe_open import read_all

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class HeldOpen(Exception):
    """Another process holds the page open for writing (``pids``)."""

    def __init__(self, pids: list[int]) -> None:
        super().__init__(pids)
        self.pids = pids


class Changed(Exception):
    """The page is not what the plan read (another program changed or replaced it)."""


@dataclass(frozen=True)
class Rewritten:
    kept: bytes  # what another program appended meanwhile, kept at the end of the new page


def open_for_writing() -> dict[tuple[int, int], list[int]]:
    """(device, inode) -> the processes other than this one that hold that file open for
    writing (their pids), as far as this user may see them (``/proc/PID/fd`` and ``fdinfo``;
    none where there is no ``/proc``). One pass over every process: a run that rewrites many
    pages takes it once (``rewrite_page``'s ``writers``)."""
    me = os.getpid()
    found: dict[tuple[int, int], list[int]] = {}
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return {}
    for pid in pids:
        if pid == me:
            continue
        fds = f"/proc/{pid}/fd"
        try:
            names = os.listdir(fds)
        except OSError:  # gone, or another user's
            continue
        for name in names:
            try:
                there = os.stat(f"{fds}/{name}")
            except OSError:
                continue
            if stat.S_ISREG(there.st_mode) and _writing(pid, name):
                holders = found.setdefault((there.st_dev, there.st_ino), [])
                if pid not in holders:
                    holders.append(pid)
    return found


def writers_of(path: Path, writers: dict[tuple[int, int], list[int]] | None = None) -> list[int]:
    """The processes other than this one that hold ``path`` open for writing (``writers``: a
    pass of ``open_for_writing`` taken already)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return []
    return (open_for_writing() if writers is None else writers).get((st.st_dev, st.st_ino), [])


def _writing(pid: int, fd: str) -> bool:
    """Whether the descriptor was opened for writing (its ``flags`` in fdinfo, in octal)."""
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("flags:"):
                    return bool(int(line.split()[1], 8) & (os.O_WRONLY | os.O_RDWR))
    except (OSError, ValueError):
        pass
    return True  # cannot tell: count it, so that nothing is lost


def rewrite_page(
    path: Path,
    old: bytes,
    new: bytes,
    writers: dict[tuple[int, int], list[int]] | None = None,
) -> Rewritten:
    """Replace the page ``path``, read as ``old``, with ``new``; see the module's docstring.
    ``writers``: ``open_for_writing()`` taken once for many pages. Raises ``HeldOpen``,
    ``Changed`` or ``OSError`` (nothing written for any)."""
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Changed()
        pids = writers_of(path, writers)
        if pids:
            raise HeldOpen(pids)
        with flocked(fd):
            if read_all(fd) != old:
                raise Changed()
            now = os.stat(path, follow_symlinks=False)
            if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                raise Changed()
            # The old file keeps a name until what was appended to it is in the new one.
            _remove_stale_names(path, st)
            held = _second_name(path)
            try:
                write_atomic(path, new)
            except BaseException:
                # Before the rename, nothing was written: the second name goes. After it (an
                # interrupt as it returned), the old page may hold lines appended meanwhile
                # that the new one lacks: it stays, and the scan reports it (status, index).
                if not _renamed(path, st):
                    _unlink(held)
                raise
            # Lines appended to the old file since it was compared: kept, after the new page.
            kept = os.pread(fd, max(0, os.fstat(fd).st_size - len(old)), len(old))
        if kept:
            tail = kept if new.endswith(b"\n") or not new else b"\n" + kept
            try:
                _append(path, tail)
            except OSError as exc:
                left = _put_back(path, held, new, tail)
                if left is None:
                    raise  # the old page is back, with every line: nothing written
                raise OSError(
                    exc.errno,
                    f"{path}: rewritten, but lines another program appended meanwhile could not "
                    f"be added to it ({exc.strerror}); {left}",
                ) from exc
        _unlink(held)
        return Rewritten(kept)
    finally:
        os.close(fd)


# What os.link fails with on a file system without hard links (FAT, some network shares) or
# where the kernel's protected_hardlinks refuses one: the rewrite goes on without the second
# name, as before it had one (an append the disk refuses then loses the kept lines). So does a
# page whose name leaves no room for the second name's 15 characters (ENAMETOOLONG: a name of
# 241 bytes and more, which write_atomic's temporary copy, one character shorter, still fits).
_NO_LINKS = frozenset(
    getattr(errno, name)
    for name in ("EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK", "EACCES", "ENAMETOOLONG")
    if hasattr(errno, name)
)


HELD_SUFFIX = ".held"  # a page's second name during a rewrite: .NAME.XXXXXXXX.held


def _remove_stale_names(path: Path, st: os.stat_result) -> None:
    """A rewrite killed before its rename left its second name of the page (the same file,
    ``st``): the page then has two names, and every write refused it as a hard link
    (``workspace.writable_path`` counts them as ours now). Removed here, under the page's lock
    and the workspace's write lock. A name of another file is left: a kill after the rename may
    have left the only copy of a line in it."""
    import glob

    for name in path.parent.glob(f".{glob.escape(path.name)}.*{HELD_SUFFIX}"):
        try:
            there = os.lstat(name)
            if (there.st_dev, there.st_ino) == (st.st_dev, st.st_ino):
                name.unlink()
        except OSError:
            pass  # gone already, or not ours to remove: the rewrite goes on


def _second_name(path: Path) -> Path | None:
    """A hard link to ``path`` beside it (``.NAME.XXXXXXXX.held``: hidden, and no ``.tmp`` that
    ``atomic.remove_stale_temps`` would remove, since one a crash leaves may hold the only copy
    of a line), or None where the file system has none. Another error (a full disk that cannot
    take a name) is raised: nothing was written."""
    for _ in range(16):
        name = path.parent / f".{path.name}.{secrets.token_hex(4)}{HELD_SUFFIX}"
        try:
            os.link(path, name, follow_symlinks=False)
        except FileExistsError:
            continue
        except NotImplementedError:  # no link that leaves a link at ``path`` as it is
            return None
        except OSError as exc:
            if exc.errno in _NO_LINKS:
                return None
            raise
        return name
    return None


def _put_back(path: Path, held: Path | None, new: bytes, tail: bytes) -> str | None:
    """After the kept lines (``tail``) could not be appended to the new page (``new``): the old
    file, with every line appended to it, renamed back over the new one, if that holds only
    what this rewrite wrote (with part of ``tail``, at most): a line another program appended to
    it would be lost. None when it was put back; else where the lines are."""
    if held is None:
        return "this file system has no hard links, so they could not be kept"
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError:
        fd = -1
    if fd >= 0:
        try:
            with flocked(fd):  # a writer that takes it waits; one that does not is not seen
                now = read_all(fd, len(new) + len(tail) + 1)
                if now.startswith(new) and tail.startswith(now[len(new) :]):
                    os.replace(held, path)
                    fsync_dir(path.parent)
                    return None
        except OSError:
            pass
        finally:
            os.close(fd)
    return f"they are in {held.name} beside it (the page as it was, with them)"


def _renamed(path: Path, st: os.stat_result) -> bool:
    """Whether ``path`` is no longer the file ``st`` (the new page was renamed over it)."""
    try:
        now = os.stat(path, follow_symlinks=False)
    except OSError:
        return True  # gone: the old page's second name may be its only name
    return (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino)


def _unlink(held: Path | None) -> None:
    if held is not None:
        with contextlib.suppress(OSError):
            held.unlink()


def _append(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | _NOFOLLOW)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
