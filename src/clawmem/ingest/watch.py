"""``clawmem watch``: keep the index fresh while files change.

The daemon is deliberately dumb about *what* changed. File events only say "something happened,
sync soon"; every sync is the same stat scan + ``plan_sync`` + ``Indexer.index()`` that a user's
``clawmem index`` runs, so an editor's atomic save (temp file, then rename), a rename, a deletion
and a ``git checkout`` touching hundreds of files all end up as the one question "what differs from
the index?". Events are debounced (``debounce_ms``): a burst gives one sync.

Events can be lost (inotify queue overflow, a watched folder deleted and re-created, network file
systems that never send any), so every ``reconcile_seconds`` the daemon also runs the cheap stat
scan itself and syncs whatever it finds. The observer thread is restarted if it dies.

Two small files in ``.memory/`` let other processes see the daemon:

- ``watch.lock``: held for the daemon's lifetime (``locking.acquire``, the same OS lock as the write
  lock), with ``watch.lock.owner`` naming its pid. The kernel drops the lock when the process dies,
  so a lock left by a killed daemon is simply taken over.
- ``watch.json``: pid, start time, the last sync and a heartbeat, written atomically. ``status``
  reports a daemon whose heartbeat stopped as unresponsive instead of calling the index fresh.
- ``watch.sock`` (Linux): the journal (``journal.py``). A recall asks it whether every change made
  before the question is in the index, and skips its own stat pass of every file when it is.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

from clawmem.errors import ClawmemError, LockedError, StoreError, WorkspaceError
from clawmem.files import safe_open
from clawmem.files.atomic import write_atomic
from clawmem.files.locking import HeldLock, acquire, is_held, read_owner
from clawmem.ingest.journal import Journal, inside
from clawmem.markdown.links import TOO_MANY_LINKS
from clawmem.markdown.workspace import TREES, folder_gone, folder_identity, is_memory_path
from clawmem.text import untrusted_json

if TYPE_CHECKING:
    from types import FrameType

    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers.api import BaseObserver, ObservedWatch

    from clawmem.ingest.indexing import Indexer
    from clawmem.ingest.sync import SyncReport

LOCK_NAME = "watch.lock"
STATE_NAME = "watch.json"

# Watchdog reports opens and read-only closes too; indexing reads every changed file, so reacting
# to those would make each sync trigger the next.
_RELEVANT = {"created", "deleted", "modified", "moved", "closed", "attrib"}

Log = Callable[[str], None]


def log_line(message: str) -> None:
    """One stderr line with a local timestamp: readable in a terminal and in journald."""
    sys.stderr.write(f"{datetime.now():%Y-%m-%d %H:%M:%S} {message}\n")
    sys.stderr.flush()


# --------------------------------------------------------------------------- single instance
def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def acquire_watch_lock(memory_dir: Path) -> HeldLock:
    """``.memory/watch.lock``: one daemon per workspace (``locking.acquire``, the write lock's
    implementation). Raises LockedError naming the running daemon."""
    path = memory_dir / LOCK_NAME
    try:
        # A ``status`` probing the lock holds it for microseconds: wait a moment before calling
        # the workspace taken.
        held = acquire(path, timeout=1.0, purpose="clawmem watch")
    except OSError as exc:
        raise StoreError(
            f"{path}: cannot create the watch lock ({exc.strerror})",
            hint="the daemon needs a writable .memory/ folder",
        ) from None
    if held is None:
        owner = read_owner(path)
        who = f"pid {owner.pid}" if owner and owner.pid is not None else "another process"
        raise LockedError(
            f"{memory_dir.parent}: already watched by {who}",
            hint="one watcher per workspace is enough; stop the other one first",
        )
    return held


# --------------------------------------------------------------------------- state file
def _write_state(memory_dir: Path, state: dict) -> None:
    write_atomic(memory_dir / STATE_NAME, json.dumps(state, indent=1) + "\n")


def _read_state(memory_dir: Path) -> dict | None:
    try:
        # A cloned repository may commit .memory/: its JSON is read as outside JSON (nested
        # 200,000 deep, it made every status an internal error).
        data = untrusted_json.loads(safe_open.read_bytes(memory_dir / STATE_NAME) or b"")
    except (OSError, ValueError, ClawmemError):
        return None
    return data if isinstance(data, dict) else None


def watcher_status(memory_dir: Path) -> dict | None:
    """What is known about this workspace's watch daemon; None if none ever ran here.

    Keys: ``running`` (bool), ``pid``, ``started_at``, ``last_sync_at``, ``last_sync``,
    ``heartbeat_at``, ``reconcile_seconds``, ``last_error``, ``responsive`` (False when a running
    daemon's heartbeat is overdue: it is stuck, and the index may be stale).
    """
    memory_dir = Path(memory_dir)
    lock = memory_dir / LOCK_NAME
    state = _read_state(memory_dir)
    if state is None and not lock.exists():
        return None
    held = is_held(lock)
    owner = read_owner(lock)
    pid = owner.pid if owner else None
    if held is None:  # cannot probe the lock: fall back on the pid it names
        held = pid is not None and _pid_alive(pid)
    state = dict(state or {})
    out = {
        "running": bool(held),
        "pid": pid if held else state.get("pid"),
        "started_at": state.get("started_at"),
        "last_sync_at": state.get("last_sync_at"),
        "last_sync": state.get("last_sync"),
        "heartbeat_at": state.get("heartbeat_at"),
        "reconcile_seconds": state.get("reconcile_seconds"),
        "last_error": state.get("last_error"),
        "stopped_at": None if held else state.get("stopped_at"),
        "journal": state.get("journal") if held else None,
        "responsive": True,
    }
    if held and state.get("pid") == pid and out["heartbeat_at"]:
        period = float(out["reconcile_seconds"] or 30)
        # Heartbeats come at least every reconcile period; allow a long sync in between.
        out["responsive"] = time.time() - float(out["heartbeat_at"]) < max(3 * period, 120.0)
    return out


def _clock(ts: float | None) -> str:
    if not ts:
        return "never"
    when = datetime.fromtimestamp(float(ts))
    today = when.date() == datetime.now().date()
    return f"{when:%H:%M:%S}" if today else f"{when:%Y-%m-%d %H:%M:%S}"


def describe_watcher(info: dict | None) -> str:
    """The one-line form ``status`` prints, e.g. "running (pid 123), last sync 14:02:11"."""
    if info is None:
        return "not running"
    if not info["running"]:
        if info.get("last_sync_at"):
            last = _clock(info["last_sync_at"])
            return f"not running (last sync {last} by pid {info.get('pid')})"
        return "not running"
    text = f"running (pid {info['pid']}), last sync {_clock(info.get('last_sync_at'))}"
    if not info["responsive"]:
        text += f"; unresponsive: no heartbeat since {_clock(info.get('heartbeat_at'))}"
    elif info.get("last_error"):
        text += f"; last attempt failed: {info['last_error']}"
    journal = info.get("journal")
    if journal and journal != "on":
        text += f"; journal {journal}: recalls stat every file"
    return text


# --------------------------------------------------------------------------- the daemon
class _Stop(Exception):
    """Raised at a transaction boundary when a stop was requested during a sync."""


class Watcher:
    """The loop. ``run()`` returns on ``request_stop()`` (signals arrive as KeyboardInterrupt)."""

    def __init__(
        self,
        ix: Indexer,
        *,
        debounce_s: float | None = None,
        reconcile_s: float | None = None,
        embed: bool = True,
        use_events: bool = True,
        log: Log = log_line,
        lock_timeout: float = 2.0,
        session_quiet_s: float | None = None,
    ) -> None:
        self.ix = ix
        self.root: Path = ix.root
        self.debounce_s = (ix.cfg.debounce_ms if debounce_s is None else debounce_s * 1000) / 1000
        self.reconcile_s = float(ix.cfg.reconcile_seconds if reconcile_s is None else reconcile_s)
        self.reconcile_s = max(self.reconcile_s, 0.2)
        # A file rewritten every second would postpone a trailing debounce forever.
        self.max_delay_s = max(10.0, 5 * self.debounce_s)
        self.embed = embed
        self.use_events = use_events
        self.log = log
        self.lock_timeout = lock_timeout
        self.stop = threading.Event()
        self.stop_requested = False  # set by signal handlers; honoured at a safe point
        self.syncing = False
        self._last_progress = 0.0
        self.syncs = 0
        self.observer: BaseObserver | None = None
        self._watched: dict[str, tuple[ObservedWatch, tuple[int, int]]] = {}
        self._mu = threading.Lock()
        self._first_event: float | None = None
        self._last_event = 0.0
        self._events = 0
        # Transcripts grow by a message at a time: they are synced in batches (the seeds' delta
        # thresholds, session_batch_bytes / session_batch_messages) or once quiet this long.
        self.session_quiet_s = (
            max(self.debounce_s, 5.0) if session_quiet_s is None else session_quiet_s
        )
        self._session_first: float | None = None
        self._session_last = 0.0
        self._next_batch_check = 0.0
        self._rewatch = False
        self._wake = threading.Event()
        self.state: dict = {
            "pid": os.getpid(),
            "workspace": str(self.root),
            "started_at": time.time(),
            "heartbeat_at": time.time(),
            "last_sync_at": None,
            "last_sync": None,
            "last_error": None,
            "reconcile_seconds": self.reconcile_s,
            "debounce_ms": round(self.debounce_s * 1000),
            "stopped_at": None,
        }
        self._state_error_logged = False
        self._vectors_off_logged = False
        self.journal: Journal | None = None
        # The folder watched, as it was at the start: a watcher whose workspace was removed
        # (or replaced by another folder of that name) has nothing left to watch, and every
        # write it made brought the folder back (write_atomic makes the folders it writes in):
        # an empty workspace with a fresh index, watched for ever.
        self._root_ident = folder_identity(self.root)
        self.gone: str | None = None

    # ------------------------------------------------------------------ events
    def _rel(self, path: str | bytes) -> str | None:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        try:
            return Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def relevant(self, event: FileSystemEvent) -> bool:
        if event.event_type not in _RELEVANT:
            return False
        paths = [event.src_path, getattr(event, "dest_path", "") or ""]
        for raw in paths:
            if not raw:
                continue
            rel = self._rel(raw)
            if rel is None or rel == ".":
                continue
            if event.is_directory:
                if event.event_type in ("modified", "attrib", "closed"):
                    continue  # the entries' own events follow
                parts = rel.split("/")
                if any(p.startswith(".") for p in parts):
                    continue
                if parts[0] in TREES or _under_extra(rel, self.ix.cfg.extra_paths):
                    if len(parts) == 1:
                        self._rewatch = True  # memory/ or bank/ itself appeared or vanished
                    return True
            elif is_memory_path(rel, self.ix.cfg.extra_paths):
                return True
        return False

    def _session_folders(self) -> list[Path]:
        from clawmem.transcripts.sessions import folders

        return folders(self.root, self.ix.cfg)

    def transcript_event(self, event: FileSystemEvent) -> bool:
        """A change to a ``.jsonl`` file in a configured sessions folder."""
        if event.event_type not in _RELEVANT or not self.ix.cfg.session_paths:
            return False
        for raw in (event.src_path, getattr(event, "dest_path", "") or ""):
            if not raw:
                continue
            path = Path(os.fsdecode(raw))
            if path.suffix != ".jsonl" and not event.is_directory:
                continue
            for folder in self._session_folders():
                if path == folder or folder in path.parents:
                    return True
        return False

    def on_journal_event(self) -> None:
        """The journal read a change (its own inotify descriptor): the same as a file event."""
        self._note_change()

    def _note_change(self) -> None:
        now = time.monotonic()
        with self._mu:
            if self._first_event is None:
                self._first_event = now
            self._last_event = now
            self._events += 1
        self._wake.set()

    def on_event(self, event: FileSystemEvent) -> None:
        """Called on the observer's thread: only note the time and wake the loop."""
        if self.transcript_event(event):
            now = time.monotonic()
            with self._mu:
                if self._session_first is None:
                    self._session_first = now
                self._session_last = now
            self._wake.set()
            return
        if self.relevant(event):
            self._note_change()

    def _desired_watches(self) -> dict[str, bool]:
        """Folder -> recursive. Only memory folders: a recursive watch on a workspace that is
        also a code repository would put an inotify watch on every folder of .git and
        node_modules."""
        want = {str(self.root): False}  # MEMORY.md, and memory/ or bank/ appearing
        for tree in TREES:
            p = self.root / tree
            if self._inside(p) and p.is_dir():
                want[str(p)] = True
        for extra in self.ix.cfg.extra_paths:
            p = self.root / extra
            if self._inside(p) and p.is_dir():
                want[str(p)] = True
            elif self._inside(p.parent) and p.parent.is_dir():
                want.setdefault(str(p.parent), False)
        for folder in self._session_folders():
            if folder.is_dir():
                want[str(folder)] = True
        return want

    def _inside(self, path: Path) -> bool:
        """Whether ``path`` is inside the workspace once its links are followed: a cloned
        repository's ``memory -> /`` put a recursive inotify watch on every folder of the
        machine (the scan never reads through it; the watch listed them all and used up the
        user's inotify watches, which other programs need)."""
        return inside(self.root, str(path))

    def _ensure_watches(self) -> None:
        if self.observer is None:
            return
        want = self._desired_watches()
        for path in list(self._watched):
            handle, ident = self._watched[path]
            if path not in want or _ident(Path(path)) != ident:
                # Gone, or deleted and re-created: the old inotify watch sees nothing any more.
                try:
                    self.observer.unschedule(handle)
                except (KeyError, OSError, ValueError):
                    pass
                del self._watched[path]
        for path, recursive in want.items():
            if path in self._watched:
                continue
            try:
                handle = self.observer.schedule(
                    cast("FileSystemEventHandler", _Handler(self)), path, recursive=recursive
                )
            except OSError as exc:
                self.log(
                    f"warning: cannot watch {path} ({exc.strerror or exc}); "
                    f"relying on the stat scan every {self.reconcile_s:g} s"
                )
                continue
            self._watched[path] = (handle, _ident(Path(path)))

    def _start_observer(self) -> None:
        if not self.use_events:
            return
        from watchdog.observers import Observer

        self.observer = Observer()
        self._watched = {}
        self._ensure_watches()
        try:
            self.observer.start()
        except OSError as exc:  # e.g. the inotify instance limit
            self.log(
                f"warning: file events unavailable ({exc}); "
                f"relying on the stat scan every {self.reconcile_s:g} s"
            )
            self.observer = None

    def _stop_observer(self) -> None:
        obs, self.observer = self.observer, None
        if obs is None:
            return
        try:
            obs.stop()
            obs.join(timeout=5)
        except Exception:  # noqa: BLE001 - a broken observer must not stop the shutdown
            pass

    # ------------------------------------------------------------------ state
    def _root_gone(self) -> str | None:
        """Why the workspace folder is not the one this watcher started in, if it is not."""
        return folder_gone(self.root, self._root_ident)

    def _save_state(self, **changes: object) -> None:
        self.state.update(changes)
        self.state["heartbeat_at"] = time.time()
        if self._root_gone() is not None:
            return  # never write into a workspace that is gone: it would make its folder again
        try:
            _write_state(self.ix.memory_dir, self.state)
        except OSError as exc:
            if not self._state_error_logged:
                self.log(
                    f"warning: cannot write {STATE_NAME} ({exc.strerror}); "
                    "`clawmem status` will not see this watcher's progress"
                )
                self._state_error_logged = True

    # ------------------------------------------------------------------ sync
    def needs_sync(self) -> str | None:
        """The cheap check: a stat scan compared with the index. Why a sync is needed, or None."""
        from clawmem.ingest.sync import chunking_key, plan_fresh
        from clawmem.store import db
        from clawmem.store.index import FOREIGN, Index

        if not self.ix.index_path.exists():
            return "no index yet"
        token = self.journal.begin() if self.journal is not None else 0
        try:
            idx = Index.open(self.ix.index_path, readonly=True)
        except db.DatabaseError as exc:
            return f"index unreadable ({exc})"
        try:
            why = idx.check_compatible(chunking_key(self.ix.cfg))
            if why is not None:
                return why if why == FOREIGN else "index made by another clawmem version"
            plan = plan_fresh(self.ix.root, self.ix.scan(), idx)
            if not plan.empty:
                n = len(plan.added) + len(plan.changed) + len(plan.removed)
                return f"{n} file(s) differ from the index"
            if self.journal is not None:
                self.journal.caught_up(token)  # every file as the index says, as of the token
            if self.embed and idx.pending_count():
                emb = self.ix.supply.embedder()
                if emb is not None:
                    return f"{idx.pending_count()} chunk(s) waiting for vectors"
            return None
        except db.DatabaseError as exc:
            return f"index unreadable ({exc})"
        except OSError as exc:  # a vanished folder mid-scan: let the sync report it properly
            return f"stat scan failed ({exc.strerror or exc})"
        finally:
            idx.close()

    def transcript_backlog(self) -> tuple[int, int]:
        """(bytes, lines) written to transcripts since they were last indexed."""
        from clawmem.store import db
        from clawmem.store.index import Index
        from clawmem.transcripts.sessions import backlog

        if not self.ix.index_path.exists():
            return (0, 0)
        try:
            idx = Index.open(self.ix.index_path, readonly=True)
        except db.DatabaseError:
            return (0, 0)
        try:
            cfg = self.ix.cfg
            return backlog(idx, self.root, cfg, self.ix.scan(), cfg.session_batch_bytes)
        except (db.DatabaseError, OSError):
            return (0, 0)
        finally:
            idx.close()

    def _transcripts_due(self, now: float) -> str | None:
        """Why the transcripts that changed should be synced now, or None (wait for more)."""
        with self._mu:
            first, last = self._session_first, self._session_last
        if first is None:
            return None
        if now >= last + self.session_quiet_s:
            return "transcript(s) quiet"
        if now < self._next_batch_check:
            return None
        self._next_batch_check = now + 1.0
        size, lines = self.transcript_backlog()
        cfg = self.ix.cfg
        if size >= cfg.session_batch_bytes or lines >= cfg.session_batch_messages:
            return f"transcript(s): {size:,} bytes, {lines} line(s) new"
        return None

    def _progress(self, stage: str, done: int, total: int) -> None:
        # Called between committed transactions: the one place a requested stop is clean.
        if self.stop_requested or self.stop.is_set():
            raise _Stop()
        now = time.monotonic()
        if now - self._last_progress > min(10.0, self.reconcile_s):
            self._last_progress = now
            if stage == "embed":
                self.log(f"embedding {done}/{total} chunk(s)…")
            self._save_state()  # a long first sync is not a hung daemon

    def sync(self, reason: str) -> bool:
        """One ``Indexer.index()``. True if it completed; errors are logged, never raised."""
        self._last_progress = time.monotonic()
        self.syncing = True
        journal = self.journal
        token = journal.begin() if journal is not None else 0
        if journal is not None:
            journal.syncing = True
        try:
            report = self.ix.index(
                embed=self.embed, progress=self._progress, lock_timeout=self.lock_timeout
            )
            if journal is not None:
                # Synced from a scan taken after the token: the files as of then are indexed.
                journal.caught_up(token)
        except LockedError as exc:
            self.log(f"waiting: {exc.message}; retrying")
            return False
        except ClawmemError as exc:
            hint = f" ({exc.hint})" if exc.hint else ""
            self.log(f"error: sync failed: {exc.message}{hint}")
            self._save_state(last_error=exc.message)
            return False
        except (_Stop, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - a daemon logs a bug and keeps serving
            self.log(f"error: internal error while syncing: {type(exc).__name__}: {exc}")
            for line in traceback.format_exc().rstrip().splitlines():
                self.log("  " + line)
            self._save_state(last_error=f"{type(exc).__name__}: {exc}")
            return False
        finally:
            self.syncing = False
            if journal is not None:
                journal.syncing = False
        self.syncs += 1
        if self.embed and self.ix.supply.error and not self._vectors_off_logged:
            self._vectors_off_logged = True
            self.log(f"note: {self.ix.supply.error}; syncing the lexical index only")
        summary = _summary(report, vectors=self.embed and not self.ix.supply.error)
        # The state first: whoever reads the log line (a person, a test) then finds the sync in
        # `clawmem status` too.
        self._save_state(last_sync_at=time.time(), last_sync=summary, last_error=None)
        self.log(f"synced ({reason}): {summary}")
        return True

    # ------------------------------------------------------------------ loop
    def request_stop(self) -> None:
        """Stop from another thread (tests, embedding applications)."""
        self.stop.set()
        self._wake.set()

    def run(self) -> None:
        self.log(
            f"watching {self.root} (debounce {self.debounce_s * 1000:.0f} ms, stat scan every "
            f"{self.reconcile_s:g} s{'' if self.use_events else ', file events off'})"
        )
        self._start_journal()
        self._save_state()
        self._start_observer()
        if self.embed and self.journal is not None and self.ix.cfg.vectors:
            # Load the model now rather than at the first edit: recalls then get their query's
            # vector from this process (~30 ms) instead of loading the model (~1.5 s) each.
            self.ix.supply.embedder()
        try:
            self._loop()
        finally:
            self._stop_observer()
            if self.journal is not None:
                self.journal.close()

    def _start_journal(self) -> None:
        """The journal recalls ask instead of statting every file; without it they stat."""
        if not self.use_events:
            self.state["journal"] = "off (file events off)"
            return
        journal = Journal(
            self.root,
            self.ix.memory_dir,
            self.ix.cfg,
            wake=self.on_journal_event,
            log=self.log,
            # Only a model already loaded (``run`` loads it after the journal starts): a recall
            # that asks before then loads its own rather than wait.
            embedder=lambda: self.ix.supply.loaded if self.embed else None,
        )
        try:
            journal.start()
        except OSError as exc:
            self.state["journal"] = f"off ({exc.strerror or exc})"
            self.log(f"note: no journal for recalls ({exc.strerror or exc}); they stat the files")
            return
        self.journal = journal
        self.state["journal"] = "on"

    def _loop(self) -> None:
        retry_at: float | None = None
        backoff = 1.0
        # Sync at start: the files may have changed while no one was watching.
        pending_reason: str | None = "start"
        next_reconcile = time.monotonic() + self.reconcile_s
        while not self.stop.is_set() and not self.stop_requested:
            gone = self._root_gone()  # a stat a second at most: the loop wakes that often
            if gone is not None:
                self.gone = f"{self.root}: the workspace folder {gone}"
                return
            now = time.monotonic()
            with self._mu:
                first, last, n = self._first_event, self._last_event, self._events
            due = float("inf")
            if first is not None:
                due = min(last + self.debounce_s, first + self.max_delay_s)
            with self._mu:
                session_first, session_last = self._session_first, self._session_last
            if session_first is not None:
                due = min(due, session_last + self.session_quiet_s, self._next_batch_check)
            if pending_reason is not None:
                due = min(due, retry_at if retry_at is not None else now)
            due = min(due, next_reconcile)
            if due > now:
                self._wake.wait(min(due - now, 1.0))
                self._wake.clear()
                continue
            if first is not None and now >= min(last + self.debounce_s, first + self.max_delay_s):
                with self._mu:
                    self._first_event, self._events = None, 0
                if pending_reason is None:
                    # Events only say "look"; the stat scan says whether there is anything to do
                    # (a sync that just ran may already have seen these changes).
                    why = self.needs_sync()
                    pending_reason = f"{n} file event(s)" if why is not None else None
                retry_at = None
            if session_first is not None and pending_reason is None:
                why_now = self._transcripts_due(now)
                if why_now is not None:
                    with self._mu:
                        self._session_first = None
                    pending_reason = why_now
            if now >= next_reconcile:
                next_reconcile = now + self.reconcile_s
                self._check_health()
                with self._mu:
                    # A transcript still growing waits for its batch, not for the stat scan.
                    events_waiting = (
                        self._first_event is not None or self._session_first is not None
                    )
                if pending_reason is None and not events_waiting:
                    why = self.needs_sync()
                    if why is not None:
                        pending_reason = f"stat scan: {why}"
                        if self.observer is not None:
                            self.log(f"stat scan found changes the file watcher missed: {why}")
                self._save_state()  # heartbeat
            if self._rewatch:
                self._rewatch = False
                self._ensure_watches()
            if pending_reason is not None and (retry_at is None or now >= retry_at):
                if self.sync(pending_reason):
                    pending_reason, retry_at, backoff = None, None, 1.0
                else:
                    retry_at = time.monotonic() + backoff
                    backoff = min(backoff * 2, max(self.reconcile_s, 2.0))

    def _check_health(self) -> None:
        if not self.use_events:
            return
        if self.observer is None or not self.observer.is_alive():
            self.log("warning: the file watcher stopped; restarting it")
            self._stop_observer()
            self._start_observer()
        else:
            self._ensure_watches()


class _Handler:
    """A watchdog handler without watchdog's base class, so this module imports without it."""

    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def dispatch(self, event: FileSystemEvent) -> None:
        self.watcher.on_event(event)


def _ident(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
        return (st.st_dev, st.st_ino)
    except OSError:
        return (0, 0)


def _under_extra(rel: str, extra_paths: tuple[str, ...]) -> bool:
    for extra in extra_paths:
        e = extra.strip("/")
        if rel == e or rel.startswith(e + "/"):
            return True
    return False


def _summary(report: SyncReport, *, vectors: bool = True) -> str:
    r = report
    parts = []
    if r.rebuilt:
        parts.append(f"rebuilt ({r.rebuild_reason})" if r.rebuild_reason else "rebuilt")
    if r.files_indexed or r.files_removed or r.rebuilt:
        parts.append(f"{r.files_indexed} file(s) indexed")
        if r.files_removed:
            parts.append(f"{r.files_removed} removed")
        parts.append(f"{r.units} chunks+facts")
    else:
        parts.append("no content changed")
    if r.embedded or r.reused:
        parts.append(f"{r.embedded} vector(s) embedded, {r.reused} reused")
    if r.pending and vectors:
        parts.append(f"{r.pending} vector(s) pending")
    # A note's links over the cap are a problem of the note, not a malformed fact.
    facts = [d for _, d in r.problems if not str(d.get("message", "")).startswith(TOO_MANY_LINKS)]
    if facts:
        parts.append(f"{len(facts)} malformed fact(s) in the workspace")
    return ", ".join(parts) + f" in {r.seconds:.2f} s"


def run_watch(
    ix: Indexer, *, use_events: bool = True, embed: bool = True, log: Log = log_line
) -> None:
    """The daemon in the foreground, until Ctrl-C or SIGTERM, or until its workspace folder is
    removed or replaced (then ``WorkspaceError``). Raises LockedError if one runs."""
    ix.prepare_memory_dir()
    lock = acquire_watch_lock(ix.memory_dir)
    watcher = Watcher(ix, embed=embed, use_events=use_events, log=log)
    if lock.previous is not None and lock.previous.pid is not None:
        log(f"took over the watch lock of pid {lock.previous.pid}, which is no longer running")

    def on_signal(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if watcher.syncing and not watcher.stop_requested:
            # Let the sync reach its next commit; a second signal stops at once.
            watcher.stop_requested = True
            log(f"{name}: stopping after the current step")
            return
        watcher.stop_requested = True
        raise KeyboardInterrupt(name)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    reason = "stopped"
    try:
        watcher.run()
    except (KeyboardInterrupt, _Stop) as exc:
        reason = f"stopped ({exc})" if str(exc) else "stopped"
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        watcher._save_state(stopped_at=time.time())
        lock.release()
    if watcher.gone is not None:
        log(f"stopped after {watcher.syncs} sync(s): {watcher.gone}")
        raise WorkspaceError(
            f"{watcher.gone}; the watcher stopped",
            hint="run `clawmem watch` in the workspace again once it is back",
        )
    log(f"{reason} after {watcher.syncs} sync(s)")
