"""Opening SQLite with the extensions clawmem needs.

The standard library's ``sqlite3`` is often built without extension loading (it is here, and on
macOS system Pythons), so clawmem uses ``sqlean`` (sqlean.py, a drop-in DB-API module) and falls
back to ``sqlite3`` only if sqlean is missing. sqlite-vec is verified with ``vec_version()`` at
open; when it cannot load, vectors move to a plain table searched by an exact NumPy scan and
``status`` / ``recall --json`` say so and why.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from clawmem.files import safe_open

try:  # pragma: no cover - which branch runs depends on the installation
    import sqlean as sqlite
except ImportError:  # pragma: no cover
    import sqlite3 as sqlite  # type: ignore[no-redef]

Connection = Any  # sqlean.Connection or sqlite3.Connection: same DB-API surface


class Row(Protocol):
    """A row as ``connect`` returns them (``sqlite.Row``: sqlean's or sqlite3's): its values by
    column name or position."""

    def __getitem__(self, key: str | int, /) -> Any: ...


DatabaseError = sqlite.DatabaseError
OperationalError = sqlite.OperationalError
MMAP_BYTES = 1 << 30
_SQLITE_FULL = 13


def disk_full(exc: BaseException) -> bool:
    """Whether a failed write ran out of room: SQLite's SQLITE_FULL, or the OS's ENOSPC, EDQUOT
    (quota) or EFBIG (a file size limit, which the soak uses where it cannot mount a tmpfs)."""
    import errno

    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
    if isinstance(exc, DatabaseError):
        code = getattr(exc, "sqlite_errorcode", None)
        return (code is not None and code & 0xFF == _SQLITE_FULL) or "disk is full" in str(exc)
    return False


@dataclass(frozen=True)
class VectorSupport:
    available: bool
    backend: str  # "sqlite-vec" | "numpy"
    version: str  # sqlite-vec version, or ""
    reason: str  # why the fallback is in use; "" when sqlite-vec works


@functools.cache
def _vec_loadable() -> str | None:
    """sqlite-vec's loadable file, without its extension; None when it is not installed. Found
    once per process (~1.5 ms; a process that recalls often opens a connection for each)."""
    # `import sqlite_vec` pulls in numpy (~120 ms) only to find its own file; locate it directly.
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "vec0")


def _load_vec(conn: Connection) -> VectorSupport:
    if os.environ.get("CLAWMEM_DISABLE_SQLITE_VEC"):
        return VectorSupport(False, "numpy", "", "disabled by $CLAWMEM_DISABLE_SQLITE_VEC")
    loadable = _vec_loadable()
    if loadable is None:
        return VectorSupport(False, "numpy", "", "sqlite-vec is not installed")
    try:
        conn.enable_load_extension(True)
        conn.load_extension(loadable)  # SQLite adds the platform's suffix (.so, .dylib, .dll)
        conn.enable_load_extension(False)
        (version,) = conn.execute("select vec_version()").fetchone()
    except AttributeError:
        return VectorSupport(
            False, "numpy", "", f"{sqlite.__name__} was built without extension loading"
        )
    except Exception as exc:  # noqa: BLE001 - any load failure means: fall back, and say why
        return VectorSupport(False, "numpy", "", f"sqlite-vec failed to load: {exc}")
    return VectorSupport(True, "sqlite-vec", str(version), "")


def map_bytes(path: Path) -> int:
    """How much of the index at ``path`` a connection maps into memory (``mmap_size``): all of
    it, when it fits in ``MMAP_BYTES``; else none.

    Mapped, a page is read without a system call: a vec0 scan touches thousands of them per query
    (-25% on a 100k-unit vec0 scan, an index of ~300 MB). But every mapped page a process has
    touched counts in its memory (RSS): at 1M units (a 2.7 GB index) a one-shot recall's lexical
    leg touched 200-330 MB of scattered pages, its peak RSS 230-360 MB, against 50-85 MB read
    through SQLite's page cache, for CPU time within the runs' spread (one-shot and in-process
    recalls alike, docs/benchmarks.md "1M units"). An index larger than the map was only partly mapped anyway;
    its vectors are scanned from the resident embedder's or this process's own copy."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return MMAP_BYTES  # not there yet: created by this connection, small
    return MMAP_BYTES if size <= MMAP_BYTES else 0


def uri(path: Path | str, flags: str) -> str:
    """SQLite's URI of the file ``path`` opened with ``flags`` ("mode=ro"), the path
    percent-encoded: a workspace in a folder named "notes#1" or "a?b" is that folder (written
    as it is, "#" ended the path and "?" began the flags, so SQLite opened the file "notes"
    beside the workspace, and created it, in its default read-write mode)."""
    from urllib.parse import quote

    return f"file:{quote(str(path))}?{flags}"


def connect(path: Path, *, readonly: bool = False) -> tuple[Connection, VectorSupport]:
    # SQLite opens the database and its -wal/-shm by name and follows links: refuse them first.
    safe_open.check_database(path)
    if readonly:
        # A WAL database on a folder we cannot write needs `immutable` (no -shm can be created).
        flags = "mode=ro" if os.access(path.parent, os.W_OK) else "mode=ro&immutable=1"
        conn = sqlite.connect(uri(path, flags), uri=True, timeout=30, check_same_thread=False)
    else:
        # Every write transaction takes the write lock as it begins (BEGIN IMMEDIATE, waiting up
        # to busy_timeout for another writer), not at its first write: a deferred transaction
        # that has read first holds a snapshot, and when another process committed since, its
        # first write fails at once with "database is locked" (SQLITE_BUSY_SNAPSHOT), which no
        # busy_timeout retries. Reads outside a transaction take no lock.
        conn = sqlite.connect(
            str(path), timeout=30, check_same_thread=False, isolation_level="IMMEDIATE"
        )
    conn.row_factory = sqlite.Row
    vec = _load_vec(conn)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute(f"PRAGMA mmap_size = {map_bytes(path)}")
    if not readonly:
        conn.execute("PRAGMA synchronous = NORMAL")
    return conn, vec


def is_corruption(exc: Exception) -> bool:
    """A damaged file (rebuild it) as opposed to a full disk or an I/O error (report it)."""
    msg = str(exc).lower()
    return "not a database" in msg or "malformed" in msg or "file is encrypted" in msg


def sqlite_version() -> str:
    return sqlite.sqlite_version
