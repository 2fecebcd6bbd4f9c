"""Scarce resources: a full disk, a read-only ``.memory/``, a database another process holds.

Each case checks three things: the error is clear (``clawmem: error: ...``, a non-zero exit that
is not 70, no traceback), nothing is lost (the Markdown is as before, or has exactly the line a
retain that succeeded added; the index passes ``integrity_check``), and clawmem recovers once the
resource is back (the next ``index`` completes, leaves no temporary file and equals a rebuild).

The full disk is a small tmpfs (root only); without root it falls back on ``RLIMIT_FSIZE``,
which makes every write past the limit fail with EFBIG as a full disk fails with ENOSPC.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .workspace import (
    answers,
    child_env,
    converges,
    integrity,
    leftovers,
    make_workspace,
    markdown,
    run,
)


class Checks:
    def __init__(self, log: Callable[[str], None]) -> None:
        self.passed: list[str] = []
        self.failed: list[str] = []
        self.log = log

    def expect(self, ok: bool, what: str) -> bool:
        (self.passed if ok else self.failed).append(what)
        if not ok:
            self.log(f"  FAIL resources: {what}")
        return ok

    def clear_error(self, r: subprocess.CompletedProcess, what: str) -> bool:
        ok = (
            r.returncode not in (0, 70)
            and r.stderr.startswith("clawmem: error: ")
            and "Traceback" not in r.stderr
        )
        return self.expect(ok, f"{what}: a clear error (exit {r.returncode}: {r.stderr[:160]!r})")

    def recovers(self, ws: Path, work: Path, what: str) -> None:
        r = run(ws, "index", "--json")
        self.expect(r.returncode == 0, f"{what}: the next index completes ({r.stderr[:160]!r})")
        self.expect(not leftovers(ws), f"{what}: no temporary file left ({leftovers(ws)[:3]})")
        self.expect(integrity(ws) == "ok" and answers(ws), f"{what}: the index is intact")
        diff = converges(ws, work) if r.returncode == 0 else "not synced"
        self.expect(diff is None, f"{what}: the index equals a rebuild ({diff})")


def _retain_outcome(
    c: Checks,
    r: subprocess.CompletedProcess[str],
    before: bytes,
    after: bytes,
    fact: str,
    what: str,
) -> None:
    """A retain either fails clearly with the log unchanged, or succeeds with one whole line."""
    if r.returncode == 0:
        added = after[len(before.rstrip(b"\n")) :].decode("utf-8", "replace")
        c.expect(
            after.startswith(before.rstrip(b"\n")) and added.count(fact) == 1,
            f"{what}: retain succeeded and added its line whole",
        )
    else:
        c.clear_error(r, f"{what}: retain")
        c.expect(after == before, f"{what}: the failed retain left the log byte for byte")


@contextlib.contextmanager
def small_disk(where: Path, size: str) -> Iterator[Path | None]:
    """A tmpfs of ``size`` mounted at ``where`` (root only), else None (tests/test_crash.py uses
    it too)."""
    where.mkdir(parents=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        yield None
        return
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    if r.returncode != 0:
        yield None
        return
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` until only about ``leave`` bytes are free; the file that fills it."""
    filler = disk / f"filler-{time.monotonic_ns()}"
    st = os.statvfs(disk)
    with open(filler, "wb") as fh:
        with contextlib.suppress(OSError):
            fh.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))
    return filler


def disk_full(work: Path, c: Checks) -> str:
    with small_disk(work / "disk", "8m") as disk:
        if disk is None:
            return _disk_full_by_rlimit(work, c)
        ws = disk / "ws"
        make_workspace(ws, 80)
        c.expect(run(ws, "index").returncode == 0, "disk: first index")
        before = markdown(ws)
        fill(disk, (ws / ".memory" / "index.sqlite").stat().st_size // 3)
        c.clear_error(run(ws, "index", "--force"), "disk full: rebuild")
        c.expect(integrity(ws) == "ok" and answers(ws), "disk full: the old index still answers")
        c.expect(markdown(ws) == before, "disk full: Markdown unchanged by a failed rebuild")
        fill(disk, 0)
        log = ws / "memory" / "2024-01-05.md"
        old = log.read_bytes()
        fact = "The disk-full fact number one."
        r = run(ws, "retain", fact, "--date", "2024-01-05")
        _retain_outcome(c, r, old, log.read_bytes(), fact, "disk full")
        for p in disk.glob("filler-*"):
            p.unlink()
        c.recovers(ws, work, "disk full, then space again")
        r = run(ws, "retain", "The disk-full fact number two.", "--date", "2024-01-05")
        c.expect(r.returncode == 0, f"disk space again: retain works ({r.stderr[:160]!r})")
        return "tmpfs of 8 MB"


def _disk_full_by_rlimit(work: Path, c: Checks) -> str:
    import resource

    ws = work / "ws-rlimit"
    make_workspace(ws, 80)
    c.expect(run(ws, "index").returncode == 0, "rlimit: first index")
    limit = (ws / ".memory" / "index.sqlite").stat().st_size // 3

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    before = markdown(ws)
    c.clear_error(run(ws, "index", "--force", preexec_fn=cap), "file size limit: rebuild")
    c.expect(integrity(ws) == "ok" and answers(ws), "file size limit: the old index answers")
    c.expect(markdown(ws) == before, "file size limit: Markdown unchanged")
    c.recovers(ws, work, "file size limit lifted")
    return "RLIMIT_FSIZE (no tmpfs: not root)"


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[bool]:
    """``folder`` read-only even for root: a read-only bind mount of it onto itself."""
    if os.geteuid() != 0:
        mode = folder.stat().st_mode
        folder.chmod(0o555)
        try:
            yield True
        finally:
            folder.chmod(mode)
        return
    if subprocess.run(
        ["mount", "--bind", str(folder), str(folder)], capture_output=True
    ).returncode:
        yield False
        return
    try:
        r = subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], capture_output=True)
        yield r.returncode == 0
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def read_only_index(work: Path, c: Checks) -> None:
    ws = work / "ws-ro"
    make_workspace(ws, 40)
    c.expect(run(ws, "index").returncode == 0, "read-only: first index")
    with read_only(ws / ".memory") as ok:
        if not c.expect(ok, "read-only: could make .memory/ read-only"):
            return
        (ws / "memory" / "2030-01-01.md").write_text("# x\n\nThe bittern count.\n")
        c.clear_error(run(ws, "index"), "read-only .memory/: index")
        c.clear_error(run(ws, "index", "--force"), "read-only .memory/: rebuild")
        r = run(ws, "recall", "payment ledger", "--json")
        c.expect(r.returncode == 0 and '"results"' in r.stdout, "read-only: recall answers")
        r = run(ws, "status", "--json")
        c.expect(r.returncode == 0, f"read-only: status answers ({r.stderr[:160]!r})")
        log = ws / "memory" / "2024-01-03.md"
        old = log.read_bytes()
        fact = "The read-only fact."
        r = run(ws, "retain", fact, "--date", "2024-01-03")
        _retain_outcome(c, r, old, log.read_bytes(), fact, "read-only .memory/")
    c.recovers(ws, work, "read-only .memory/, then writable")


HOLD_LOCK = (
    "import sys, time; from pathlib import Path; from clawmem.files.locking import write_lock\n"
    "with write_lock(Path(sys.argv[1]), purpose='soak holder'):\n"
    "    print('held', flush=True); time.sleep(float(sys.argv[2]))\n"
)
HOLD_DB = (
    "import sys, time; from pathlib import Path; from clawmem.store import db\n"
    "conn, _ = db.connect(Path(sys.argv[1]))\n"
    "conn.execute('BEGIN EXCLUSIVE')\n"
    "print('held', flush=True); time.sleep(float(sys.argv[2])); conn.rollback()\n"
)


def _holder(code: str, target: Path, seconds: float) -> subprocess.Popen:
    p = subprocess.Popen(
        [sys.executable, "-c", code, str(target), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    assert p.stdout is not None and p.stdout.readline().strip() == "held"
    return p


def held_database(work: Path, c: Checks, seconds: float) -> dict:
    ws = work / "ws-held"
    make_workspace(ws, 40)
    c.expect(run(ws, "index").returncode == 0, "held: first index")
    waits = {}
    # The write lock held by another writer: writers wait for it, readers do not.
    p = _holder(HOLD_LOCK, ws / ".memory", seconds)
    t0 = time.monotonic()
    r = run(ws, "recall", "payment ledger", "--json")
    waits["recall_under_write_lock_s"] = round(time.monotonic() - t0, 1)
    c.expect(r.returncode == 0 and '"results"' in r.stdout, "write lock held: recall answers")
    t0 = time.monotonic()
    fact = "The held-lock fact."
    log = ws / "memory" / "2024-01-02.md"
    old = log.read_bytes()
    r = run(ws, "retain", fact, "--date", "2024-01-02")
    waits["retain_waited_s"] = round(time.monotonic() - t0, 1)
    _retain_outcome(c, r, old, log.read_bytes(), fact, "write lock held")
    p.wait()
    r = run(ws, "index", "--json")
    c.expect(r.returncode == 0, "write lock released: index")
    # The database itself held in an exclusive transaction (another SQLite program, a backup).
    p = _holder(HOLD_DB, ws / ".memory" / "index.sqlite", seconds)
    t0 = time.monotonic()
    r = run(ws, "recall", "payment ledger", "--json")
    waits["recall_under_exclusive_s"] = round(time.monotonic() - t0, 1)
    if r.returncode != 0:
        c.clear_error(r, "database held: recall")
    (ws / "memory" / "2030-02-02.md").write_text("# x\n\nThe gannet colony.\n")
    r = run(ws, "index")
    waits["index_under_exclusive_s"] = round(time.monotonic() - t0, 1)
    if r.returncode != 0:
        c.clear_error(r, "database held: index")
    old = log.read_bytes()
    fact = "The held-database fact."
    r = run(ws, "retain", fact, "--date", "2024-01-02")
    _retain_outcome(c, r, old, log.read_bytes(), fact, "database held")
    p.wait()
    c.recovers(ws, work, "database released")
    return waits


def run_resources(work: Path, hold_seconds: float, log: Callable[[str], None]) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    c = Checks(log)
    method = disk_full(work, c)
    read_only_index(work, c)
    waits = held_database(work, c, hold_seconds)
    return {
        "checks": len(c.passed) + len(c.failed),
        "failures": len(c.failed),
        "disk_full_method": method,
        "hold_seconds": hold_seconds,
        **waits,
        "failed": c.failed,
    }
