"""Opening clawmem's own files without following a link: the one rule for ``.memory/``.

A workspace may come from someone else (``git clone``), and git checks out symbolic links as
links. A repository that commits ``.memory/write.lock.owner`` as a link to ``~/.gitconfig``, or
``.memory`` itself as a link to a folder elsewhere, would have clawmem write, truncate or read a
file outside the workspace on its next command. So:

* ``check_state_dir``: ``.memory`` must be a real folder (not a link) owned by the user who runs
  clawmem, that no other user can write, and hold no links; anything else is refused with
  ``UnsafePathError``, which names the path and the fix. Every opening of the workspace and every
  connection to its index checks it. Another user who can write the folder could plant an index
  (its texts shown under real citations, its hashes matching the Markdown, and its recorded
  origin forged, since that user can read the inode of the file they made).
* ``open_file`` (and the helpers on top of it) open a file with ``O_NOFOLLOW`` and check after
  opening that a regular file was opened: a link put there after the check is refused by the
  kernel, not followed; a file opened for writing must have no other name (a hard link).
* ``check_database``: for the files SQLite opens by path itself (``index.sqlite``, ``-wal``,
  ``-shm``, ``-journal``), checked just before it opens them: no link, the user's own, and
  writable by nobody else (SQLite makes them ``0644`` less the umask, so only another hand
  makes them otherwise).

A workspace folder that others can write as well (a disk without Unix permissions, such as
``/mnt/c`` under WSL, where every file is ``0777``) holds an index no more exposed than its
Markdown, which such a user could rewrite anyway: there the write permissions are not refused.

Pages in the workspace (daily logs, entity and episode pages) follow the same rule through
``markdown.workspace.writable_path``, which names the link and the fix in the page's terms.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from pathlib import Path

from clawmem.errors import UnsafePathError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# Opening a FIFO (which a link-free folder can still hold) must not block: it is refused below.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
# SQLite's files beside a database, each opened by path inside SQLite.
DB_SIDE_FILES = ("-wal", "-shm", "-journal")
# The index file in ``.memory`` (named here too: the folder's fix removes it).
INDEX_FILE = "index.sqlite"


def _link_error(path: Path, what: str = "") -> UnsafePathError:
    return UnsafePathError(
        f"{path}: is a symbolic link{what}; clawmem never reads or writes its files through a "
        "link (a cloned repository can plant one)",
        hint=f"remove the link: rm {path} && clawmem index",
    )


def check_state_dir(path: Path) -> None:
    """Refuse a ``.memory`` folder that is a link, not a folder, not the user's own, writable by
    another user, or that holds a link. A missing folder is fine (``make_state_dir`` creates it)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePathError(
            f"{path}: is a symbolic link; clawmem keeps its index only in a real folder inside "
            "the workspace (a cloned repository can plant such a link)",
            hint=f"remove the link: rm {path} && clawmem index",
        )
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePathError(
            f"{path}: is not a folder; clawmem keeps its derived index there",
            hint=f"remove it: rm {path} && clawmem index",
        )
    uid = getattr(os, "geteuid", None)
    if uid is not None and st.st_uid != uid():
        raise UnsafePathError(
            f"{path}: belongs to user id {st.st_uid}, not to you (id {uid()}); clawmem does not "
            "use an index folder another user controls",
            hint=f"remove it: rm -r {path} && clawmem index (or run clawmem as its owner)",
        )
    why = _others_may_write(st, path.parent)
    if why:
        raise UnsafePathError(
            f"{path}: {why}; another user could plant an index there, and clawmem does not "
            "read one it cannot trust",
            hint=f"make it yours alone and rebuild the index: chmod go-w {path} && "
            f"rm -f {path}/{INDEX_FILE}* && clawmem index",
        )
    try:
        entries = list(os.scandir(path))
    except OSError:
        return  # unreadable: what needs it says so when it opens a file there
    for entry in entries:
        if entry.is_symlink():
            raise _link_error(path / entry.name, " in clawmem's index folder")


def _others_may_write(st: os.stat_result, workspace: Path) -> str | None:
    """Why a user other than you can write the file or folder ``st`` describes (None: nobody
    can), unless they can write the ``workspace`` folder too: then the index is no more exposed
    than the Markdown it is made from."""
    why = _writers_besides_you(st)
    if why is None:
        return None
    try:
        if _writers_besides_you(os.stat(workspace)) is not None:
            return None
    except OSError:
        pass
    return why


def _writers_besides_you(st: os.stat_result) -> str | None:
    if not hasattr(os, "geteuid"):
        return None  # Windows: no Unix permissions to read
    mode = stat.S_IMODE(st.st_mode)
    if mode & stat.S_IWOTH:
        return f"is writable by every user (mode {mode:04o})"
    if mode & stat.S_IWGRP and _group_has_others(st.st_gid):
        return f"is writable by group id {st.st_gid}, which has other members (mode {mode:04o})"
    return None


@functools.lru_cache(maxsize=8)
def _group_has_others(gid: int) -> bool:
    """Whether a user other than you belongs to group ``gid``. A group of your own (a user
    private group: ``umask 002`` makes folders group-writable) lets nobody else write; a group
    the system does not know is taken to have others."""
    import grp
    import pwd

    me = os.geteuid()
    try:
        members = set(grp.getgrgid(gid).gr_mem)
    except KeyError:
        return True
    try:
        my_name = pwd.getpwuid(me).pw_name
    except KeyError:
        my_name = None
    if members - {my_name}:
        return True
    return any(u.pw_gid == gid and u.pw_uid != me for u in pwd.getpwall())


def make_state_dir(path: Path) -> None:
    """Create ``.memory`` if it is missing (OSError when it cannot be), then check it."""
    check_state_dir(path)
    try:
        os.mkdir(path, 0o755)  # whatever the umask, nobody else may write it (check_state_dir)
    except FileExistsError:
        pass
    check_state_dir(path)  # a link that appeared in between is refused, not used


def refuse_links(*paths: Path) -> None:
    """``UnsafePathError`` if any of ``paths`` is a symbolic link (missing ones are fine)."""
    for p in paths:
        try:
            if stat.S_ISLNK(os.lstat(p).st_mode):
                raise _link_error(p)
        except FileNotFoundError:
            continue


def check_database(path: Path) -> None:
    """Before SQLite opens ``path`` by name: its folder passes ``check_state_dir`` when it is
    clawmem's index folder, and neither the database nor its side files is a link (SQLite
    would follow it, and write its WAL beside the link's target), nor, there, another user's
    or writable by another user (a planted WAL is replayed into the database when it opens)."""
    if path.parent.name != ".memory":
        refuse_links(path, *(Path(f"{path}{s}") for s in DB_SIDE_FILES))
        return
    check_state_dir(path.parent)
    uid = getattr(os, "geteuid", None)
    for p in (path, *(Path(f"{path}{s}") for s in DB_SIDE_FILES)):
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(st.st_mode):
            raise _link_error(p)
        why = None
        if uid is not None and st.st_uid != uid():
            why = f"belongs to user id {st.st_uid}, not to you (id {uid()})"
        else:
            why = _others_may_write(st, path.parent.parent)
        if why:
            raise UnsafePathError(
                f"{p}: {why}; another user could have written into the index, and clawmem "
                "does not read one it cannot trust",
                hint=f"remove it and rebuild the index from the Markdown: rm -f {path} "
                f"{path}-wal {path}-shm && clawmem index",
            )


def open_file(path: Path, flags: int, mode: int = 0o666) -> int:
    """``os.open`` that never follows a link at ``path`` and returns a descriptor of a regular
    file only. ``UnsafePathError`` for a link or anything but a regular file; other OSErrors
    (a missing file, no permission) propagate as they are."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _CLOEXEC | _NONBLOCK, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise _link_error(path) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePathError(
                f"{path}: is not a regular file; clawmem opens only plain files here",
                hint=f"remove it: rm {path}",
            )
        if flags & (os.O_WRONLY | os.O_RDWR) and st.st_nlink > 1:
            # A hard link: the same file under another name, anywhere on the disk. Written
            # here (appended to, or truncated: a lock's owner note), that file would change.
            raise UnsafePathError(
                f"{path}: is a hard link (the file has {st.st_nlink} names); clawmem never "
                "writes its files through a link",
                hint=f"remove it: rm {path}",
            )
        if _NONBLOCK:
            import fcntl

            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_all(fd: int, limit: int | None = None) -> bytes:
    """Everything left to read of the open file ``fd``, in 1 MiB reads (``limit``: no more
    than that many bytes)."""
    chunks, left = [], limit
    while left is None or left > 0:
        chunk = os.read(fd, 1 << 20 if left is None else min(1 << 20, left))
        if not chunk:
            break
        chunks.append(chunk)
        left = None if left is None else left - len(chunk)
    return b"".join(chunks)


def read_bytes(path: Path, limit: int | None = None) -> bytes | None:
    """The file's bytes (the last ``limit`` of them if given); None when it does not exist."""
    try:
        fd = open_file(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        if limit is not None:
            size = os.fstat(fd).st_size
            return os.pread(fd, limit, max(0, size - limit))
        return read_all(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def append(path: Path, data: bytes) -> None:
    """Append ``data`` at the end of ``path`` (created if missing), never through a link."""
    fd = open_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def overwrite(path: Path, data: bytes) -> None:
    """Write ``data`` as the whole of ``path`` in place (a small note such as a lock's owner
    line, which readers may see half written), never through a link."""
    fd = open_file(path, os.O_WRONLY | os.O_CREAT)
    try:
        os.ftruncate(fd, 0)  # after the checks: O_TRUNC would act before them
        _write_all(fd, data)
    finally:
        os.close(fd)


def create_if_absent(path: Path, data: bytes) -> bool:
    """Create ``path`` holding ``data`` unless something (a link included) is there: False."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666)
    except FileExistsError:
        return False
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)
    return True
